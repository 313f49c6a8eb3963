// The libbpf skeleton of src/bpf/main.bpf.c, generated in build.rs.
include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
