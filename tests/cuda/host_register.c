/*
 * host_register.c - what cuMemHostRegister (portable, mapped, as gpuprio registers its gate lines)
 * does with a page of each kind of host memory, over the fake driver, for disk_board.sh:
 *
 *   host_register FILE   FILE (created, one page) mapped shared; then a page of anonymous memory
 *
 * prints "file: N" and "anonymous: N", the CUresult of each registration (0: registered). The real
 * driver refuses a shared mapping of a file outside tmpfs and hugetlbfs (Linux does not allow
 * long-term pinning of its pages), and so must the fake; anonymous memory it always registers.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_must.h"

static int try_register(void *p, size_t size)
{
    CUresult r =
        cuMemHostRegister(p, size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r == CUDA_SUCCESS)
        MUST(cuMemHostUnregister(p));
    return (int)r;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: host_register FILE\n");
        return 2;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)page) != 0) {
        perror(argv[1]);
        return 1;
    }
    void *file = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *anon = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (file == MAP_FAILED || anon == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    printf("file: %d\n", try_register(file, page));
    printf("anonymous: %d\n", try_register(anon, page));
    MUST(cuDevicePrimaryCtxRelease(0));
    close(fd);
    return 0;
}
