/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bottleneck tracking (colab-tpds 5.2), included by main.bpf.c: who keeps
 * whom waiting on futexes, for both policies' labels.
 *
 * fentry/fexit on futex_wait and futex_lock_pi (the PI path colab-tpds 5.2
 * instruments besides the plain one) time every wait. The tracepoint
 * sched_waking runs in the context of whoever wakes a task: when the woken
 * task is in one of those waits, the current task is its waker, and its pid
 * and name are noted in the woken task's storage. futex_wake and
 * futex_unlock_pi (through the rt-mutex's wake queue) both wake in the
 * waker's context, so the charge goes to the thread that actually woke
 * the waiter, not to the last thread that called futex_wake on the address.
 * A wait that ends by a wake-up (return 0) is charged in full to that
 * waker, as the simulator charges it (engine.rs, wake): its
 * blocked_others_ns grows by the wait time in the hash map block_stats
 * that the labeller reads. Timeouts and signals end waits with an error
 * and are nobody's doing; a wake-up from interrupt context (a timer) names
 * whichever task was interrupted, which is why only waits that returned 0
 * are charged. Not covered: futex_waitv and requeue-PI waits (glibc's
 * condition variables use neither since 2.25).
 */

/* Called with the futex wait starting: time it. */
static __always_inline void futex_wait_begins(void)
{
	struct task_ctx *tctx = lookup_tctx(bpf_get_current_task_btf());

	if (tctx) {
		tctx->wait_start = bpf_ktime_get_ns();
		tctx->waker_pid = 0;
	}
}

static __always_inline void charge(u32 waker_pid, u64 waited, const char *comm)
{
	struct colab_block_stat zero = {}, *bs;

	bs = bpf_map_lookup_elem(&block_stats, &waker_pid);
	if (!bs) {
		bpf_map_update_elem(&block_stats, &waker_pid, &zero, BPF_NOEXIST);
		bs = bpf_map_lookup_elem(&block_stats, &waker_pid);
		if (!bs)
			return;
	}
	__sync_fetch_and_add(&bs->blocked_others_ns, waited);
	__sync_fetch_and_add(&bs->charges, 1);
	__builtin_memcpy(bs->comm, comm, COLAB_COMM_LEN);
}

/* Called with the futex wait over (@ret its result): charge its waker. */
static __always_inline void futex_wait_ends(int ret)
{
	struct task_struct *self = bpf_get_current_task_btf();
	struct task_ctx *tctx = lookup_tctx(self);
	u64 start, now;
	u32 waker;

	if (!tctx)
		return;
	start = tctx->wait_start;
	waker = tctx->waker_pid;
	tctx->wait_start = 0;
	tctx->waker_pid = 0;
	/* Only waits that ended with a wake-up are someone's doing. */
	if (!start || ret != 0 || !waker || waker == (u32)self->pid)
		return;
	now = bpf_ktime_get_ns();
	if (now <= start)
		return;
	charge(waker, now - start, tctx->waker_comm);
	stat_inc(COLAB_STAT_FUTEX_CHARGES);
}

SEC("fentry/futex_wait")
int BPF_PROG(colab_futex_wait_enter, u32 *uaddr, unsigned int flags, u32 val, ktime_t *abs_time,
	     u32 bitset)
{
	futex_wait_begins();
	return 0;
}

SEC("fexit/futex_wait")
int BPF_PROG(colab_futex_wait_exit, u32 *uaddr, unsigned int flags, u32 val, ktime_t *abs_time,
	     u32 bitset, int ret)
{
	futex_wait_ends(ret);
	return 0;
}

SEC("fentry/futex_lock_pi")
int BPF_PROG(colab_futex_lock_pi_enter, u32 *uaddr, unsigned int flags, ktime_t *time, int trylock)
{
	futex_wait_begins();
	return 0;
}

SEC("fexit/futex_lock_pi")
int BPF_PROG(colab_futex_lock_pi_exit, u32 *uaddr, unsigned int flags, ktime_t *time, int trylock,
	     int ret)
{
	futex_wait_ends(ret);
	return 0;
}

/* The current task wakes @p: if @p waits on a futex, note who woke it. */
SEC("tp_btf/sched_waking")
int BPF_PROG(colab_futex_waking, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_tctx(p);

	if (!tctx || !tctx->wait_start)
		return 0;
	tctx->waker_pid = bpf_get_current_pid_tgid();
	bpf_get_current_comm(tctx->waker_comm, sizeof(tctx->waker_comm));
	if (policy_rota)
		rota_waker_stamp();
	return 0;
}
