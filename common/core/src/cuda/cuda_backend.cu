// cuda_backend.cu: real NVIDIA GPUs through cudart. One stream per device for
// all its work, so that the device runs it in order while the host goes on,
// and a second one for the copy queue (labkit/copy_queue.h), created on first
// use, which takes only uploads and events; memory from the stream-ordered
// allocator (cudaMallocAsync), so that a free waits for the work queued before
// it, as on the simulated GPU. A graph is its recording issued on the stream
// under stream capture, instantiated once.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../backend.h"
#include "cuda_blas.h"
#include "cuda_internal.h"

namespace
{

struct cuda_device {
    bool started;
    cudaStream_t stream;
    cudaStream_t copies;        // the copy queue; nullptr until first used
    cudaEvent_t copies_reached; // recorded on `copies` to order a free after its copies
    cublasHandle_t blas;
    void *blas_workspace;
    cuda_lt lt; // cuBLASLt, for products with the bias in their epilogue
    double *scratch;
};

cuda_device devices[LABKIT_MAX_CUDA_DEVICES];
pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
bool exit_handler_set;

// Every runtime call is checked, in the style of the CUDA samples: the call,
// the error's name and where it happened. A failed call also leaves its error
// as the runtime's "last error", which the next launch's check would read as
// its own: it is cleared here, once reported.
status cuda_failure(const char *call, cudaError_t err, const char *file, int line)
{
    cudaGetLastError();
    const status s = err == cudaErrorMemoryAllocation ? STATUS_OUT_OF_MEMORY : STATUS_BACKEND_FAILED;
    const char *hint = err == cudaErrorMemoryAllocation
                           ? "\n  hint: free tensors you no longer need (tensor_free) or use smaller batches"
                           : "";
    return fail(s, "%s:%d: %s failed: %s (%s)%s", file, line, call, cudaGetErrorName(err),
                cudaGetErrorString(err), hint);
}

#define CUDA_TRY(call)                                                                 \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) return cuda_failure(#call, err_, __FILE__, __LINE__); \
    } while (0)

// At exit, what the kit created on each device goes back: cuBLAS's handle and
// its workspace, the scratch space, the stream. A tool that looks for leaks
// (compute-sanitizer --leak-check full, valgrind) then finds none of ours. The
// handler is registered after cudart has started, so it runs before cudart's own.
void stop_all_devices()
{
    const cublas_api *blas = cuda_blas();
    for (int i = 0; i < LABKIT_MAX_CUDA_DEVICES; ++i) {
        cuda_device *dev = &devices[i];
        if (!dev->started || cudaSetDevice(i) != cudaSuccess) continue;
        cudaStreamSynchronize(dev->stream);
        if (dev->copies) {
            cudaStreamSynchronize(dev->copies);
            cudaEventDestroy(dev->copies_reached);
            cudaStreamDestroy(dev->copies);
        }
        lt_stop(&dev->lt);
        if (blas && dev->blas) blas->destroy(dev->blas);
        cudaFree(dev->blas_workspace);
        cudaFree(dev->scratch);
        cudaStreamDestroy(dev->stream);
        *dev = cuda_device{};
    }
    cudaGetLastError();
}

// cuBLAS's recommended workspace: 32 MiB from Hopper (compute capability 9) on,
// 4 MiB before (cuBLAS's documentation of cublasSetWorkspace).
size_t blas_workspace_bytes(int index)
{
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index) != cudaSuccess)
        cudaGetLastError();
    return (size_t)(major >= 9 ? 32 : 4) << 20;
}

// A workspace of the kit's own, allocated once, so that no cuBLAS call ever
// allocates one: an allocation cannot be captured in a graph, and without one
// cuBLAS may take a new workspace for each graph captured. Set after the
// stream, since cublasSetStream puts the handle back on cuBLAS's own pool.
status start_blas(int index, cuda_device *dev)
{
    const cublas_api *blas = cuda_blas();
    if (!blas) return STATUS_BACKEND_FAILED;
    const size_t workspace = blas_workspace_bytes(index);
    CUDA_TRY(cudaMalloc(&dev->blas_workspace, workspace));
    cublasStatus_t s = blas->create(&dev->blas);
    if (s == CUBLAS_STATUS_SUCCESS) s = blas->set_stream(dev->blas, dev->stream);
    if (s == CUBLAS_STATUS_SUCCESS) s = blas->set_workspace(dev->blas, dev->blas_workspace, workspace);
    if (s != CUBLAS_STATUS_SUCCESS)
        return fail(STATUS_BACKEND_FAILED, "cuda:%d: cuBLAS could not start: %s", index,
                    blas->status_string(s));
    lt_start(&dev->lt, dev->blas_workspace, workspace);
    return STATUS_OK;
}

status start_device(int index, cuda_device *dev)
{
    CUDA_TRY(cudaSetDevice(index));
    CUDA_TRY(cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking));
    dev->started = true; // from here on, stop_all_devices releases what there is
    if (!exit_handler_set) exit_handler_set = atexit(stop_all_devices) == 0;
    status s = start_blas(index, dev);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMalloc(&dev->scratch, cuda_scratch_doubles() * sizeof(double)));
    return STATUS_OK;
}

// Makes `index` the current device (cudart's calls act on the current one) and
// starts it on first use.
status use_device(int index, cuda_device **out)
{
    cuda_device *dev = &devices[index];
    status s = STATUS_OK;
    pthread_mutex_lock(&start_lock);
    if (!dev->started)
        s = start_device(index, dev);
    else if (!dev->blas || !dev->blas_workspace || !dev->scratch)
        s = fail(STATUS_BACKEND_FAILED, "cuda:%d could not be started earlier", index);
    pthread_mutex_unlock(&start_lock);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaSetDevice(index));
    *out = dev;
    return STATUS_OK;
}

} // namespace

status cuda_device_stream(int index, cudaStream_t *out)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s == STATUS_OK) *out = dev->stream;
    return s;
}

namespace
{

// Both queues: what the host queued on either is done.
status wait_for(int index, cuda_device *dev)
{
    (void)index;
    CUDA_TRY(cudaStreamSynchronize(dev->stream));
    if (dev->copies) CUDA_TRY(cudaStreamSynchronize(dev->copies));
    return STATUS_OK;
}

// The stream of `queue`, the copy queue's made on its first use: a program
// that never opens it never pays for it.
status stream_of(cuda_device *dev, backend_queue queue, cudaStream_t *out)
{
    if (queue == QUEUE_COPIES && !dev->copies) {
        CUDA_TRY(cudaEventCreateWithFlags(&dev->copies_reached, cudaEventDisableTiming));
        const cudaError_t made = cudaStreamCreateWithFlags(&dev->copies, cudaStreamNonBlocking);
        if (made != cudaSuccess) {
            cudaEventDestroy(dev->copies_reached);
            dev->copies = nullptr, dev->copies_reached = nullptr;
            return cuda_failure("cudaStreamCreateWithFlags (the copy queue)", made, __FILE__, __LINE__);
        }
    }
    *out = queue == QUEUE_COPIES ? dev->copies : dev->stream;
    return STATUS_OK;
}

// The stream of `queue` on device `index`, which is made the current device.
status queue_stream(int index, backend_queue queue, cudaStream_t *out)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    return s == STATUS_OK ? stream_of(dev, queue, out) : s;
}

// Makes the compute stream wait, on the device, for what the copy queue holds
// now: what is queued on it next comes after those copies.
status join_copies(cuda_device *dev)
{
    if (!dev->copies) return STATUS_OK;
    CUDA_TRY(cudaEventRecord(dev->copies_reached, dev->copies));
    CUDA_TRY(cudaStreamWaitEvent(dev->stream, dev->copies_reached, 0));
    return STATUS_OK;
}

status cuda_synchronize(int index)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    return wait_for(index, dev);
}

// ---- memory ---------------------------------------------------------------

status cuda_alloc(int index, size_t bytes, void **out)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMallocAsync(out, bytes ? bytes : 1, dev->stream));
    return STATUS_OK;
}

// After the work queued on both queues: an upload still pending on the copy
// queue may write into this memory, so the compute stream first waits for it.
void cuda_release(int index, void *ptr, size_t bytes)
{
    (void)bytes;
    cuda_device *dev = nullptr;
    if (use_device(index, &dev) != STATUS_OK) return;
    if (join_copies(dev) != STATUS_OK)
        cudaStreamSynchronize(dev->copies); // the host waits: slower, never unsafe
    cudaFreeAsync(ptr, dev->stream);
}

status cuda_memory_info(int index, size_t in_use, size_t *free_bytes, size_t *total_bytes)
{
    (void)in_use;
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMemGetInfo(free_bytes, total_bytes));
    return STATUS_OK;
}

// ---- copies -----------------------------------------------------------------

// Queues a copy on the device's stream, after the work queued before it.
status queue_copy(int index, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, dev->stream));
    return STATUS_OK;
}

// Host <-> device copies return once done, as cudaMemcpy does, after the work
// queued before them on both queues.
status copy_and_wait(int index, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s == STATUS_OK) s = join_copies(dev);
    if (s == STATUS_OK) s = queue_copy(index, dst, src, bytes, kind);
    return s == STATUS_OK ? cuda_synchronize(index) : s;
}

status cuda_upload(int index, void *dst, const void *src, size_t bytes)
{
    return copy_and_wait(index, dst, src, bytes, cudaMemcpyHostToDevice);
}

status cuda_download(int index, void *dst, const void *src, size_t bytes)
{
    return copy_and_wait(index, dst, src, bytes, cudaMemcpyDeviceToHost);
}

status cuda_upload_async(int index, backend_queue queue, void *dst, const void *src, size_t bytes)
{
    cudaStream_t stream = nullptr;
    status s = queue_stream(index, queue, &stream);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return STATUS_OK;
}

status cuda_copy_within(int index, void *dst, const void *src, size_t bytes)
{
    return queue_copy(index, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

status cuda_copy_peer(int dst_index, void *dst, int src_index, const void *src, size_t bytes)
{
    cuda_device *to = nullptr, *from = nullptr;
    status s = use_device(dst_index, &to);
    if (s == STATUS_OK) s = wait_for(dst_index, to);
    if (s == STATUS_OK) s = use_device(src_index, &from);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, bytes, from->stream));
    return wait_for(src_index, from);
}

// ---- work -------------------------------------------------------------------

status cuda_run(int index, const op_call *op)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    return cuda_run_op(dev->stream, cuda_blas(), dev->blas, &dev->lt, dev->scratch, op);
}

status cuda_enqueue(int index, kernel_fn fn, const void *args, size_t args_size)
{
    (void)args_size;
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    fn(args, (void *)dev->stream);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return cuda_failure("a kernel launch (device_enqueue)", err, __FILE__, __LINE__);
    return STATUS_OK;
}

// ---- events -----------------------------------------------------------------

status cuda_event_create(int index, void **out)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    cudaEvent_t e;
    CUDA_TRY(cudaEventCreate(&e));
    *out = (void *)e;
    return STATUS_OK;
}

void cuda_event_destroy(int index, void *ev)
{
    (void)index;
    cudaEventDestroy((cudaEvent_t)ev);
}

status cuda_event_record(int index, backend_queue queue, void *ev)
{
    cudaStream_t stream = nullptr;
    status s = queue_stream(index, queue, &stream);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaEventRecord((cudaEvent_t)ev, stream));
    return STATUS_OK;
}

status cuda_event_wait(int index, backend_queue queue, void *ev)
{
    cudaStream_t stream = nullptr;
    status s = queue_stream(index, queue, &stream);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaStreamWaitEvent(stream, (cudaEvent_t)ev, 0));
    return STATUS_OK;
}

status cuda_event_synchronize(int index, void *ev)
{
    (void)index;
    CUDA_TRY(cudaEventSynchronize((cudaEvent_t)ev));
    return STATUS_OK;
}

bool cuda_event_done(int index, void *ev)
{
    (void)index;
    cudaError_t err = cudaEventQuery((cudaEvent_t)ev);
    if (err == cudaErrorNotReady) cudaGetLastError(); // not an error: clear it
    return err == cudaSuccess;
}

status cuda_event_elapsed_ms(int index, void *start, void *end, double *ms)
{
    (void)index;
    float elapsed = 0.0f;
    CUDA_TRY(cudaEventElapsedTime(&elapsed, (cudaEvent_t)start, (cudaEvent_t)end));
    *ms = elapsed;
    return STATUS_OK;
}

double cuda_busy_seconds(int index)
{
    (void)index;
    return 0.0;
}

// ---- graphs -------------------------------------------------------------------

// One recorded call, issued on the stream exactly as the call itself issues it.
status issue(int index, const graph_cmd *c)
{
    switch (c->kind) {
    case GRAPH_CMD_OP: return cuda_run(index, &c->op);
    case GRAPH_CMD_KERNEL: return cuda_enqueue(index, c->kernel, c->args, sizeof c->args);
    case GRAPH_CMD_COPY: return cuda_copy_within(index, c->dst, c->src, c->bytes);
    case GRAPH_CMD_UPLOAD: return cuda_upload_async(index, QUEUE_COMPUTE, c->dst, c->src, c->bytes);
    }
    return fail(STATUS_BACKEND_FAILED, "cuda:%d: a recorded call of unknown kind %d", index, (int)c->kind);
}

// The recording, issued on the stream under stream capture: the calls are
// recorded as the graph's nodes, not run. The capture is opened and closed
// here, with nothing but the recording issued in between, so nothing that a
// capture forbids (an allocation, a blocking copy, a synchronisation: the front
// end refused those) can reach the stream meanwhile. Thread-local mode: only
// this thread's calls are checked for what would break the capture, so another
// thread that allocates or copies, on this GPU or another, goes on undisturbed
// (global mode would make its calls fail while this capture is open).
status capture_on_stream(int index, cuda_device *dev, const graph_cmd *cmds, size_t count, cudaGraph_t *out)
{
    CUDA_TRY(cudaStreamBeginCapture(dev->stream, cudaStreamCaptureModeThreadLocal));
    status s = STATUS_OK;
    for (size_t i = 0; i < count && s == STATUS_OK; ++i) s = issue(index, &cmds[i]);
    // Always ended, so that the stream leaves capture mode even after a failure.
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(dev->stream, &graph);
    if (s == STATUS_OK && ended != cudaSuccess)
        s = cuda_failure("cudaStreamEndCapture", ended, __FILE__, __LINE__);
    if (s != STATUS_OK) {
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError(); // the capture's errors are not sticky: the device stays usable
        return s;
    }
    *out = graph;
    return STATUS_OK;
}

status cuda_graph_build(int index, const graph_cmd *cmds, size_t count, void **out)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    cudaGraph_t graph = nullptr;
    s = capture_on_stream(index, dev, cmds, count, &graph);
    if (s != STATUS_OK) return s;
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph); // the executable graph is a copy: the template is not needed any more
    if (made != cudaSuccess) return cuda_failure("cudaGraphInstantiate", made, __FILE__, __LINE__);
    // Sent to the device now, so that the first launch costs no more than the next.
    const cudaError_t sent = cudaGraphUpload(exec, dev->stream);
    if (sent != cudaSuccess) {
        cudaGraphExecDestroy(exec);
        return cuda_failure("cudaGraphUpload", sent, __FILE__, __LINE__);
    }
    *out = (void *)exec;
    return STATUS_OK;
}

status cuda_graph_launch(int index, void *g)
{
    cuda_device *dev = nullptr;
    status s = use_device(index, &dev);
    if (s != STATUS_OK) return s;
    CUDA_TRY(cudaGraphLaunch((cudaGraphExec_t)g, dev->stream));
    return STATUS_OK;
}

// cudaGraphExecDestroy leaves launches in flight to finish: the graph is freed
// when they have.
void cuda_graph_destroy(int index, void *g)
{
    (void)index;
    cudaGraphExecDestroy((cudaGraphExec_t)g);
}

// ---- properties ---------------------------------------------------------------

status cuda_properties(int index, device_properties *out)
{
    cudaDeviceProp prop;
    int sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0;
    CUDA_TRY(cudaGetDeviceProperties(&prop, index));
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, index));
    CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
    CUDA_TRY(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, index));
    CUDA_TRY(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
    std::memset(out, 0, sizeof *out);
    std::snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof out->name - 1, prop.name);
    out->memory_bytes = prop.totalGlobalMem;
    out->multiprocessors = sms;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->cores_per_mp = fp32_cores_per_multiprocessor(prop.major, prop.minor);
    out->clock_ghz = clock_khz / 1e6;
    out->peak_gflops = peak_fp32_gflops(sms, out->cores_per_mp, out->clock_ghz);
    // Two transfers per memory clock (double data rate), bus_bits / 8 bytes each.
    out->memory_bandwidth_gbs = 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    if (out->cores_per_mp == 0)
        std::snprintf(
            out->notes, sizeof out->notes,
            "compute capability %d.%d is not in the kit's table: FP32 cores per SM and peak unknown",
            prop.major, prop.minor);
    else
        std::snprintf(out->notes, sizeof out->notes,
                      "%d SMs x %d FP32 cores x %.2f GHz boost x 2 (FMA); memory: %d-bit bus x %.2f GHz x 2",
                      sms, out->cores_per_mp, out->clock_ghz, bus_bits, memory_khz / 1e6);
    return tensor_core_properties(out);
}

#ifdef LABKIT_WITH_NCCL
// The all-reduce of several GPUs, on each one's stream (labkit/collective.h).
status cuda_all_reduce_sum(const int *indices, float *const *data, int n, size_t count)
{
    cudaStream_t streams[LABKIT_MAX_CUDA_DEVICES];
    for (int i = 0; i < n; ++i) {
        cuda_device *dev = nullptr;
        status s = use_device(indices[i], &dev);
        if (s != STATUS_OK) return s;
        streams[i] = dev->stream;
    }
    return nccl_all_reduce_sum(indices, data, streams, n, count);
}
#endif

backend make_backend()
{
    backend b;
    std::memset(&b, 0, sizeof b);
    b.name = "cuda";
    b.host_memory = false;
    b.alloc = cuda_alloc;
    b.release = cuda_release;
    b.memory_info = cuda_memory_info;
    b.upload = cuda_upload;
    b.download = cuda_download;
    b.upload_async = cuda_upload_async;
    b.copy_within = cuda_copy_within;
    b.copy_peer = cuda_copy_peer;
    b.run = cuda_run;
    b.enqueue = cuda_enqueue;
    b.synchronize = cuda_synchronize;
    b.event_create = cuda_event_create;
    b.event_destroy = cuda_event_destroy;
    b.event_record = cuda_event_record;
    b.event_wait = cuda_event_wait;
    b.event_synchronize = cuda_event_synchronize;
    b.event_done = cuda_event_done;
    b.event_elapsed_ms = cuda_event_elapsed_ms;
    b.busy_seconds = cuda_busy_seconds;
    b.properties = cuda_properties;
    b.graph_build = cuda_graph_build;
    b.graph_launch = cuda_graph_launch;
    b.graph_destroy = cuda_graph_destroy;
#ifdef LABKIT_WITH_NCCL
    b.all_reduce_sum = cuda_all_reduce_sum;
#endif
    return b;
}

const backend the_backend = make_backend();

} // namespace

// What cudaGetDeviceCount said when it failed; kept for cuda_start_failure.
static cudaError_t device_count_error = cudaSuccess;

extern "C" int cuda_device_count(void)
{
    // cudaGetDeviceCount leaves its output unwritten when it fails (no driver,
    // no device), so start from 0.
    int count = 0;
    device_count_error = cudaGetDeviceCount(&count);
    if (device_count_error != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

extern "C" void cuda_start_failure(char *text, size_t size)
{
    const cudaError_t e = device_count_error;
    if (size == 0) return;
    text[0] = '\0'; // no GPU, or no driver: nothing more to say
    if (e != cudaSuccess && e != cudaErrorNoDevice && e != cudaErrorInsufficientDriver)
        snprintf(text, size, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" const backend *cuda_backend_get(void) { return &the_backend; }
