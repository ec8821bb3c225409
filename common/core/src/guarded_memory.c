/* guarded_memory.c: buffers that end at a guard page (guarded_memory.h). */
#include "guarded_memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)

/* AddressSanitizer's red zones find an index past the end better than a guard
 * page can (before the start too, and by a few bytes); let it see the memory. */
void *guarded_alloc(size_t bytes)
{
    /* posix_memalign, not aligned_alloc: the latter wants the size rounded up
     * to the alignment, and ASan would then let an index past the end land in
     * the rounding unseen. */
    void *data = NULL;
    return posix_memalign(&data, 64, bytes ? bytes : 1) == 0 ? data : NULL;
}

void guarded_free(void *data) { free(data); }

bool guarded_describe(const void *address, size_t *bytes, size_t *past_end)
{
    (void)address, (void)bytes, (void)past_end;
    return false;
}

#else

/* The note page before the data: what guarded_free and the crash report read. */
typedef struct guard_note {
    uint64_t magic;               /* NOTE_MAGIC ^ the guard's address: never found by chance */
    size_t bytes;                 /* the buffer's size, as asked */
    size_t data_pages;            /* pages between the note and the guard */
    bool in_use;                  /* false while in the cache of freed mappings */
    struct guard_note *next_free; /* in that cache */
} guard_note;

#define NOTE_MAGIC 0x6c61626b69744755ull /* "labkitGU" */

/* Freed mappings are kept for reuse up to these bounds: a training loop frees
 * and allocates the same sizes every step, and three system calls per tensor
 * would cost more than the step's small kernels. */
#define CACHE_MAX_BYTES ((size_t)256 << 20)
#define CACHE_MAX_MAPPING ((size_t)64 << 20)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static guard_note *cache;
static size_t cache_bytes;

static size_t page_size(void)
{
    static size_t page;
    if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* Layout of one mapping, in pages: [note][data ...][guard]. */
static size_t mapping_bytes(size_t data_pages) { return (data_pages + 2) * page_size(); }
static uintptr_t guard_of(const guard_note *note)
{
    return (uintptr_t)note + (note->data_pages + 1) * page_size();
}

/* Floats need 4-byte alignment; a buffer that ends at the guard starts at
 * guard - bytes rounded up to 4, so one float past the end is in the guard. */
static size_t span_of(size_t bytes) { return (bytes + 3) / 4 * 4; }
static void *data_of(const guard_note *note) { return (void *)(guard_of(note) - span_of(note->bytes)); }

/* The data starts within the first data page (or at the guard when empty), so
 * the note is the page before the one the data starts in. */
static guard_note *note_of(const void *data)
{
    const size_t page = page_size();
    return (guard_note *)((uintptr_t)data / page * page - page);
}

static guard_note *cached_mapping(size_t data_pages)
{
    pthread_mutex_lock(&cache_lock);
    guard_note **link = &cache;
    while (*link && (*link)->data_pages != data_pages) link = &(*link)->next_free;
    guard_note *found = *link;
    if (found) {
        *link = found->next_free;
        cache_bytes -= mapping_bytes(data_pages);
    }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

static guard_note *new_mapping(size_t data_pages)
{
    const size_t bytes = mapping_bytes(data_pages);
    char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    guard_note *note = (guard_note *)base;
    note->data_pages = data_pages;
    if (mprotect((void *)guard_of(note), page_size(), PROT_NONE) != 0) {
        munmap(base, bytes);
        return NULL;
    }
    note->magic = NOTE_MAGIC ^ (uint64_t)guard_of(note);
    return note;
}

void *guarded_alloc(size_t bytes)
{
    const size_t page = page_size();
    if (bytes > SIZE_MAX - 4 * page) return NULL;
    const size_t data_pages = (span_of(bytes) + page - 1) / page;
    guard_note *note = cached_mapping(data_pages);
    if (!note) note = new_mapping(data_pages);
    if (!note) return NULL;
    note->bytes = bytes;
    note->in_use = true;
    note->next_free = NULL;
    return data_of(note);
}

void guarded_free(void *data)
{
    if (!data) return;
    guard_note *note = note_of(data);
    const size_t bytes = mapping_bytes(note->data_pages);
    note->in_use = false;
    pthread_mutex_lock(&cache_lock);
    const bool keep = bytes <= CACHE_MAX_MAPPING && cache_bytes + bytes <= CACHE_MAX_BYTES;
    if (keep) {
        note->next_free = cache;
        cache = note;
        cache_bytes += bytes;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!keep) munmap(note, bytes);
}

/* Reads `n` bytes at `from` without faulting when they cannot be read: the
 * kernel copies them through a pipe and answers EFAULT instead. Only system
 * calls, so a signal handler may use it. */
static bool read_safely(void *to, const void *from, size_t n)
{
    int ends[2];
    if (pipe(ends) != 0) return false;
    const bool ok = write(ends[1], from, n) == (ssize_t)n && read(ends[0], to, n) == (ssize_t)n;
    close(ends[0]);
    close(ends[1]);
    return ok;
}

/* The guard's note is some pages below it, as many as the buffer has: look
 * down page by page (a read that cannot fault) for the note that names it. */
bool guarded_describe(const void *address, size_t *bytes, size_t *past_end)
{
    enum { MOST_PAGES = 1 << 18 }; /* 1 GiB of 4 KiB pages: give up beyond */
    const size_t page = page_size();
    const uintptr_t guard = (uintptr_t)address / page * page;
    guard_note note;
    for (size_t pages = 0; pages < MOST_PAGES && guard > (pages + 1) * page; ++pages) {
        if (!read_safely(&note, (const void *)(guard - (pages + 1) * page), sizeof note)) return false;
        if (note.magic != (NOTE_MAGIC ^ (uint64_t)guard)) continue;
        if (note.data_pages != pages || !note.in_use) return false; /* freed, or not this one */
        *bytes = note.bytes;
        *past_end = (uintptr_t)address - (guard - span_of(note.bytes) + note.bytes);
        return true;
    }
    return false;
}

#endif
