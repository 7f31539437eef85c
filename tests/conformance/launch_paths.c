/*
 * launch_paths.c - one kernel through every launch entry point, hipGetProcAddress, launch
 * configuration errors, and the device/stream properties an application reads.
 *
 * The kernel stores the value it was given, its grid and block, and the id of the stream it ran
 * on; each entry point gets its own result slot and value.
 */
#include "conf.h"

#include <dlfcn.h>

typedef struct lp_result {
    int value;
    unsigned grid[3], block[3];
    uint64_t stream_id;
} lp_result;

/* The kernel's arguments, laid out as in a HIP_LAUNCH_PARAM_BUFFER_POINTER buffer. */
typedef struct lp_args {
    lp_result *out;
    int value;
    uint64_t ns;
} lp_args;

static const void *k_store;
static int not_a_kernel;

/* lp_store(lp_result *out, int value, uint64_t ns). */
static uint64_t kernel_store(hipsimLaunch *l)
{
    lp_args a;
    if (l->args) {
        a.out = CONF_ARG(l, 0, lp_result *);
        a.value = CONF_ARG(l, 1, int);
        a.ns = CONF_ARG(l, 2, uint64_t);
    } else if (l->arg_buffer && l->arg_buffer_size >= sizeof a) {
        memcpy(&a, l->arg_buffer, sizeof a);
    } else {
        return 0;
    }
    a.out->value = a.value;
    a.out->grid[0] = l->grid.x;
    a.out->grid[1] = l->grid.y;
    a.out->grid[2] = l->grid.z;
    a.out->block[0] = l->block.x;
    a.out->block[1] = l->block.y;
    a.out->block[2] = l->block.z;
    a.out->stream_id = l->stream_id;
    return a.ns;
}

enum {
    P_LAUNCH,
    P_LAUNCH_SPT,
    P_EXT_LAUNCH,
    P_MODULE_PARAMS,
    P_MODULE_EXTRA,
    P_EXT_MODULE_C,
    P_EXT_MODULE_CXX,
    P_COOPERATIVE,
    P_COOPERATIVE_SPT,
    P_EXC,
    P_PROC_ADDRESS,
    P_HCC_MODULE_C,
    P_HCC_MODULE_CXX,
    P_COUNT
};

static const char *const path_names[P_COUNT] = {
    "hipLaunchKernel",
    "hipLaunchKernel_spt(stream 0)",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel(kernelParams)",
    "hipModuleLaunchKernel(extra)",
    "hipExtModuleLaunchKernel (C name)",
    "hipExtModuleLaunchKernel (C++ name)",
    "hipLaunchCooperativeKernel",
    "hipLaunchCooperativeKernel_spt(stream 0)",
    "hipLaunchKernelExC",
    "hipGetProcAddress(hipLaunchKernel)",
    "hipHccModuleLaunchKernel (C name)",
    "hipHccModuleLaunchKernel (C++ name)",
};

static lp_result results[P_COUNT];

typedef hipError_t (*ext_module_launch_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                           uint32_t, uint32_t, size_t, hipStream_t, void **,
                                           void **, hipEvent_t, hipEvent_t, uint32_t);
typedef hipError_t (*hcc_module_launch_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                           uint32_t, uint32_t, size_t, hipStream_t, void **,
                                           void **, hipEvent_t, hipEvent_t);
typedef hipError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);

static dim3 d3(unsigned x, unsigned y, unsigned z)
{
    dim3 d = {x, y, z};
    return d;
}

static const char *status_name(hipDriverProcAddressQueryResult st)
{
    switch (st) {
    case HIP_GET_PROC_ADDRESS_SUCCESS:
        return "HIP_GET_PROC_ADDRESS_SUCCESS";
    case HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
        return "HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
    case HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
        return "HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
    }
    return "(unknown)";
}

static void *sentinel(void)
{
    return (void *)(uintptr_t)0x5e57;
}

static void proc_address(const char *symbol, uint64_t flags, const char *flags_name,
                         const char *expect_same_as, int version)
{
    void *pfn = sentinel();
    hipDriverProcAddressQueryResult st = (hipDriverProcAddressQueryResult)99;
    hipError_t r = hipGetProcAddress(symbol, &pfn, version, flags, &st);
    printf("hipGetProcAddress(%s, %s) -> %s, %s", symbol, flags_name, conf_err(r), status_name(st));
    if (expect_same_as) {
        void *want = dlsym(RTLD_DEFAULT, expect_same_as);
        printf(", same address as dlsym(%s): %s\n", expect_same_as,
               conf_yes(want != NULL && pfn == want));
    } else {
        printf(", pfn NULL: %s\n", conf_yes(pfn == NULL));
    }
}

int main(void)
{
    conf_init();
    static const size_t store_sz[] = {sizeof(lp_result *), sizeof(int), sizeof(uint64_t)};
    k_store = conf_register("lp_store", kernel_store, 3, store_sz);

    hipStream_t s;
    hipEvent_t start, stop;
    MUST(hipStreamCreate(&s));
    MUST(hipEventCreate(&start));
    MUST(hipEventCreate(&stop));
    uint64_t sid = hipsimStreamId(s);
    MUST(hipStreamQuery(hipStreamPerThread));
    uint64_t pt_sid = hipsimStreamId(hipStreamPerThread);
    const dim3 grid = d3(2, 1, 1), block = d3(3, 1, 1);

    lp_args a[P_COUNT];
    void *params[P_COUNT][3];
    for (int i = 0; i < P_COUNT; i++) {
        a[i].out = &results[i];
        a[i].value = 101 + i;
        a[i].ns = 0;
        params[i][0] = &a[i].out;
        params[i][1] = &a[i].value;
        params[i][2] = &a[i].ns;
    }
    a[P_EXT_LAUNCH].ns = 30 * CONF_MS;

    printf("-- launch entry points\n");
    SHOW("hipLaunchKernel", hipLaunchKernel(k_store, grid, block, params[P_LAUNCH], 0, s));
    SHOW("hipLaunchKernel_spt(stream 0)",
         hipLaunchKernel_spt(k_store, grid, block, params[P_LAUNCH_SPT], 0, 0));
    SHOW("hipExtLaunchKernel(start, stop)",
         hipExtLaunchKernel(k_store, grid, block, params[P_EXT_LAUNCH], 0, s, start, stop, 0));
    SHOW("right after: hipEventQuery(stop)", hipEventQuery(stop));

    static const char image[] = "hipsim conformance module";
    hipModule_t mod = NULL;
    hipFunction_t f = NULL;
    SHOW("hipModuleLoadData", hipModuleLoadData(&mod, image));
    SHOW("hipModuleGetFunction(lp_store)", hipModuleGetFunction(&f, mod, "lp_store"));
    SHOW("hipModuleLaunchKernel(kernelParams)",
         hipModuleLaunchKernel(f, 2, 1, 1, 3, 1, 1, 0, s, params[P_MODULE_PARAMS], NULL));
    size_t extra_size = sizeof(lp_args);
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &a[P_MODULE_EXTRA],
                     HIP_LAUNCH_PARAM_BUFFER_SIZE, &extra_size, HIP_LAUNCH_PARAM_END};
    SHOW("hipModuleLaunchKernel(extra)",
         hipModuleLaunchKernel(f, 2, 1, 1, 3, 1, 1, 0, s, NULL, extra));
    SHOW("hipExtModuleLaunchKernel (C name)",
         hipExtModuleLaunchKernel(f, 6, 1, 1, 3, 1, 1, 0, s, params[P_EXT_MODULE_C], NULL, NULL,
                                  NULL, 0));
    ext_module_launch_fn cxx =
        (ext_module_launch_fn)dlsym(RTLD_DEFAULT, HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
    printf("dlsym(C++ hipExtModuleLaunchKernel) found: %s\n", conf_yes(cxx != NULL));
    if (cxx) {
        void *extra2[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &a[P_EXT_MODULE_CXX],
                          HIP_LAUNCH_PARAM_BUFFER_SIZE, &extra_size, HIP_LAUNCH_PARAM_END};
        SHOW("hipExtModuleLaunchKernel (C++ name, extra)",
             cxx(f, 6, 1, 1, 3, 1, 1, 0, s, NULL, extra2, NULL, NULL, 0));
    }
    /* hipExtModuleLaunchKernel's deprecated twin: a C name in ROCm 6 and 7, a C++ name before. */
    SHOW("hipHccModuleLaunchKernel (C name)",
         hipHccModuleLaunchKernel(f, 6, 1, 1, 3, 1, 1, 0, s, params[P_HCC_MODULE_C], NULL, NULL,
                                  NULL));
    hcc_module_launch_fn hcc_cxx =
        (hcc_module_launch_fn)dlsym(RTLD_DEFAULT, HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
    printf("dlsym(C++ hipHccModuleLaunchKernel) found: %s\n", conf_yes(hcc_cxx != NULL));
    if (hcc_cxx)
        SHOW("hipHccModuleLaunchKernel (C++ name)",
             hcc_cxx(f, 6, 1, 1, 3, 1, 1, 0, s, params[P_HCC_MODULE_CXX], NULL, NULL, NULL));
    SHOW("hipLaunchCooperativeKernel",
         hipLaunchCooperativeKernel(k_store, grid, block, params[P_COOPERATIVE], 0, s));
    SHOW("hipLaunchCooperativeKernel_spt(stream 0)",
         hipLaunchCooperativeKernel_spt(k_store, grid, block, params[P_COOPERATIVE_SPT], 0, 0));
    hipLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = s;
    SHOW("hipLaunchKernelExC", hipLaunchKernelExC(&cfg, k_store, params[P_EXC]));

    int ver = 0;
    MUST(hipRuntimeGetVersion(&ver));
    void *pfn = NULL;
    hipDriverProcAddressQueryResult st;
    SHOW("hipGetProcAddress(hipLaunchKernel)",
         hipGetProcAddress("hipLaunchKernel", &pfn, ver, HIP_GET_PROC_ADDRESS_DEFAULT, &st));
    if (pfn) {
        launch_fn lk = (launch_fn)pfn;
        SHOW("launch through it", lk(k_store, grid, block, params[P_PROC_ADDRESS], 0, s));
    }

    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    SHOW("hipStreamSynchronize(hipStreamPerThread)", hipStreamSynchronize(hipStreamPerThread));
    for (int i = 0; i < P_COUNT; i++) {
        lp_result *r = &results[i];
        int on_pt = i == P_LAUNCH_SPT || i == P_COOPERATIVE_SPT;
        printf("%s: value %d, grid %ux%ux%u, block %ux%ux%u, on %s: %s\n", path_names[i], r->value,
               r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2],
               on_pt ? "the per-thread stream" : "s",
               conf_yes(r->stream_id == (on_pt ? pt_sid : sid)));
    }
    float ms = -1.0f;
    SHOW("hipExtLaunchKernel events: hipEventElapsedTime", hipEventElapsedTime(&ms, start, stop));
    printf("elapsed >= 30ms: %s\n", conf_yes(ms >= 30.0f - 0.001f));

    printf("-- arguments are copied at launch\n");
    lp_result copied = {0};
    lp_args ca = {&copied, 7, 0};
    void *cparams[] = {&ca.out, &ca.value, &ca.ns};
    MUST(conf_launch_sleep(s, 50 * CONF_MS));
    SHOW("hipLaunchKernel(value 7)", hipLaunchKernel(k_store, grid, block, cparams, 0, s));
    ca.value = 8;
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("kernel saw value: %d\n", copied.value);

    printf("-- launch errors\n");
    SHOW("hipLaunchKernel(grid 0x1x1)",
         hipLaunchKernel(k_store, d3(0, 1, 1), block, params[P_LAUNCH], 0, s));
    SHOW("hipLaunchKernel(block 1x0x1)",
         hipLaunchKernel(k_store, grid, d3(1, 0, 1), params[P_LAUNCH], 0, s));
    SHOW("hipModuleLaunchKernel(gridDimX 0)",
         hipModuleLaunchKernel(f, 0, 1, 1, 3, 1, 1, 0, s, params[P_MODULE_PARAMS], NULL));
    cfg.gridDim = d3(1, 1, 0);
    SHOW("hipLaunchKernelExC(grid 1x1x0)", hipLaunchKernelExC(&cfg, k_store, params[P_EXC]));
    SHOW("hipLaunchKernel(unregistered)",
         hipLaunchKernel(&not_a_kernel, grid, block, params[P_LAUNCH], 0, s));
    SHOW("hipExtLaunchKernel(unregistered)",
         hipExtLaunchKernel(&not_a_kernel, grid, block, params[P_LAUNCH], 0, s, NULL, NULL, 0));
    SHOW("hipLaunchCooperativeKernel(unregistered)",
         hipLaunchCooperativeKernel(&not_a_kernel, grid, block, params[P_LAUNCH], 0, s));
    cfg.gridDim = grid;
    SHOW("hipLaunchKernelExC(unregistered)",
         hipLaunchKernelExC(&cfg, &not_a_kernel, params[P_EXC]));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));

    printf("-- hipGetProcAddress\n");
    proc_address("hipLaunchKernel", HIP_GET_PROC_ADDRESS_DEFAULT, "DEFAULT", "hipLaunchKernel",
                 ver);
    proc_address("hipNoSuchThing", HIP_GET_PROC_ADDRESS_DEFAULT, "DEFAULT", NULL, ver);
    proc_address("hipLaunchKernel", HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 "PER_THREAD_DEFAULT_STREAM", "hipLaunchKernel_spt", ver);
    proc_address("hipStreamQuery", HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 "PER_THREAD_DEFAULT_STREAM", "hipStreamQuery_spt", ver);
    proc_address("hipMalloc", HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 "PER_THREAD_DEFAULT_STREAM", "hipMalloc", ver);
    proc_address("hipNoSuchThing", HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 "PER_THREAD_DEFAULT_STREAM", NULL, ver);

    printf("-- device\n");
    int count = -1, dev = -1;
    SHOW("hipGetDeviceCount", hipGetDeviceCount(&count));
    printf("count = %d\n", count);
    SHOW("hipGetDevice", hipGetDevice(&dev));
    printf("device = %d\n", dev);
    hipDeviceProp_t prop;
    SHOW("hipGetDeviceProperties(0)", hipGetDeviceProperties(&prop, 0));
    SHOW("hipGetDeviceProperties(1)", hipGetDeviceProperties(&prop, 1));
    SHOW("hipSetDevice(1)", hipSetDevice(1));
    int least = 99, greatest = 99;
    SHOW("hipDeviceGetStreamPriorityRange", hipDeviceGetStreamPriorityRange(&least, &greatest));
    printf("least %d, greatest %d\n", least, greatest);

    printf("-- stream properties\n");
    static const int asked[] = {-5, -1, 0, 1, 5};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        hipStream_t sp;
        int prio = 99;
        char label[96];
        snprintf(label, sizeof label, "hipStreamCreateWithPriority(%d)", asked[i]);
        SHOW(label, hipStreamCreateWithPriority(&sp, hipStreamDefault, asked[i]));
        SHOW("hipStreamGetPriority", hipStreamGetPriority(sp, &prio));
        printf("priority %d\n", prio);
        MUST(hipStreamDestroy(sp));
    }
    hipStream_t snb, sp;
    unsigned flags = 99;
    int prio = 99;
    hipDevice_t sdev = -1;
    SHOW("hipStreamCreateWithPriority(NonBlocking, -1)",
         hipStreamCreateWithPriority(&sp, hipStreamNonBlocking, -1));
    SHOW("hipStreamGetFlags", hipStreamGetFlags(sp, &flags));
    printf("flags %u\n", flags);
    MUST(hipStreamDestroy(sp));
    SHOW("hipStreamGetFlags(s)", hipStreamGetFlags(s, &flags));
    printf("flags %u\n", flags);
    SHOW("hipStreamGetPriority(s)", hipStreamGetPriority(s, &prio));
    printf("priority %d\n", prio);
    SHOW("hipStreamGetDevice(s)", hipStreamGetDevice(s, &sdev));
    printf("device %d\n", (int)sdev);
    SHOW("hipStreamCreateWithFlags(NonBlocking)",
         hipStreamCreateWithFlags(&snb, hipStreamNonBlocking));
    SHOW("hipStreamGetFlags", hipStreamGetFlags(snb, &flags));
    printf("flags %u\n", flags);
    MUST(hipStreamDestroy(snb));
    SHOW("hipStreamCreateWithFlags(0x4)", hipStreamCreateWithFlags(&snb, 0x4));
    SHOW("hipExtStreamCreateWithCUMask(size 0)", hipExtStreamCreateWithCUMask(&snb, 0, NULL));
    static const uint32_t mask[1] = {0xf};
    SHOW("hipExtStreamCreateWithCUMask(NULL mask)", hipExtStreamCreateWithCUMask(&snb, 1, NULL));
    SHOW("hipExtStreamCreateWithCUMask(size 1)", hipExtStreamCreateWithCUMask(&snb, 1, mask));
    SHOW("hipStreamDestroy(it)", hipStreamDestroy(snb));

    SHOW("hipModuleUnload", hipModuleUnload(mod));
    MUST(hipEventDestroy(start));
    MUST(hipEventDestroy(stop));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
