use crate::test_util::*;
