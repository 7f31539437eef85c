// ctx_kernels.cu - the kernel of ctx_reset.c, compiled to PTX by run.sh (nvcc -ptx) and loaded
// with cuModuleLoad in every context the program makes (a module dies with its context).
//
// step: acc[0] = acc[0] * 31 + i, after spinning spin_ns on the global timer, so that a phase's
// kernels take long enough to overlap a bursting neighbour and to be behind a closed gate.
extern "C" __global__ void step(unsigned long long *acc, unsigned i, unsigned long long spin_ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < spin_ns);
    acc[0] = acc[0] * 31 + i;
}
