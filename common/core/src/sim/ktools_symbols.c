/* ktools_symbols.c: what the kernel tools read about the program itself: its
 * __shared__ arrays (names, offsets and sizes in the thread-local block, from
 * the ELF symbol table) and the source line of an instruction (addr2line).
 *
 * A __shared__ array is a static thread-local variable (cuda_emulation.h); in
 * a file built for the kernel tools each one follows a red zone named
 * labkit_shared_redzone_<line>. So the shared arrays are the local
 * thread-local symbols of the files that have such red zones: nothing of the
 * library is among them, and blockIdx and its kind are global symbols.
 *
 * Whether the program has instrumented files, and which shared array an
 * address lies in, live here too: the sanitizer and the profiler ask, and
 * ktools.c, which calls them, must not be asked (no loop between files:
 * tools/check_layers.sh). */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktools_internal.h"

#define REDZONE_PREFIX "labkit_shared_redzone_"
#define MAX_ARRAYS 512

static pthread_once_t symbols_once = PTHREAD_ONCE_INIT;
static kt_shared_array arrays[MAX_ARRAYS];
static size_t array_count;
static uintptr_t anchor_offset;
static bool anchor_found;

typedef struct function_range {
    uintptr_t start, size; /* as in the file: the load address is added */
} function_range;
static function_range *functions;
static size_t function_count;
static uintptr_t load_base;

static int by_start(const void *a, const void *b)
{
    const function_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_offset(const void *a, const void *b)
{
    const kt_shared_array *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    *(uintptr_t *)base = info->dlpi_addr;
    return 1;
}

/* "tile_a.6" (a static inside a function) is "tile_a". */
static void copy_name(char *out, size_t size, const char *name)
{
    size_t n = strcspn(name, ".");
    if (n >= size) n = size - 1;
    memcpy(out, name, n);
    out[n] = '\0';
}

/* The local thread-local symbols of one file, from `first` to before `end`:
 * its shared arrays when it has red zones. */
static void take_file(const ElfW(Sym) * symbols, const char *names, size_t first, size_t end)
{
    bool instrumented = false;
    for (size_t i = first; i < end && !instrumented; ++i)
        instrumented = ELF64_ST_TYPE(symbols[i].st_info) == STT_TLS &&
                       strncmp(names + symbols[i].st_name, REDZONE_PREFIX, sizeof REDZONE_PREFIX - 1) == 0;
    if (!instrumented) return;
    for (size_t i = first; i < end && array_count < MAX_ARRAYS; ++i) {
        const ElfW(Sym) *s = &symbols[i];
        const char *name = names + s->st_name;
        if (ELF64_ST_TYPE(s->st_info) != STT_TLS || ELF64_ST_BIND(s->st_info) != STB_LOCAL || s->st_size == 0)
            continue;
        if (strncmp(name, REDZONE_PREFIX, sizeof REDZONE_PREFIX - 1) == 0) continue;
        kt_shared_array *a = &arrays[array_count++];
        a->offset = s->st_value;
        a->size = s->st_size;
        copy_name(a->name, sizeof a->name, name);
    }
}

static void read_symbols(void)
{
    const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(ElfW(Ehdr)))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    const unsigned char *file = map;
    const size_t file_size = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > file_size) {
        munmap(map, file_size);
        return;
    }
    const ElfW(Shdr) *sections = (const ElfW(Shdr) *)(file + eh->e_shoff);
    for (unsigned s = 0; s < eh->e_shnum; ++s) {
        if (sections[s].sh_type != SHT_SYMTAB || sections[s].sh_link >= eh->e_shnum) continue;
        const ElfW(Shdr) *strings = &sections[sections[s].sh_link];
        if (sections[s].sh_offset + sections[s].sh_size > file_size ||
            strings->sh_offset + strings->sh_size > file_size)
            break;
        const ElfW(Sym) *symbols = (const ElfW(Sym) *)(file + sections[s].sh_offset);
        const char *names = (const char *)(file + strings->sh_offset);
        const size_t n = sections[s].sh_size / sizeof(ElfW(Sym));
        size_t file_start = 0;
        functions = malloc(n * sizeof *functions);
        for (size_t i = 0; i < n; ++i) {
            if (functions && ELF64_ST_TYPE(symbols[i].st_info) == STT_FUNC && symbols[i].st_size > 0)
                functions[function_count++] = (function_range){ symbols[i].st_value, symbols[i].st_size };
            if (symbols[i].st_name >= strings->sh_size) continue;
            const char *name = names + symbols[i].st_name;
            const unsigned type = ELF64_ST_TYPE(symbols[i].st_info);
            if (type == STT_FILE) {
                take_file(symbols, names, file_start, i);
                file_start = i + 1;
            } else if (type == STT_TLS && ELF64_ST_BIND(symbols[i].st_info) == STB_GLOBAL &&
                       strcmp(name, "threadIdx") == 0) {
                anchor_offset = symbols[i].st_value;
                anchor_found = true;
            }
        }
        /* the global symbols come after every file's locals */
        take_file(symbols, names, file_start, n);
        break;
    }
    munmap(map, file_size);
    qsort(arrays, array_count, sizeof arrays[0], by_offset);
    if (functions) qsort(functions, function_count, sizeof functions[0], by_start);
    dl_iterate_phdr(first_object, &load_base);
}

const kt_shared_array *ktools_shared_arrays(size_t *count)
{
    pthread_once(&symbols_once, read_symbols);
    *count = array_count;
    return arrays;
}

bool ktools_function_range(uintptr_t address, uintptr_t *start, uintptr_t *end)
{
    pthread_once(&symbols_once, read_symbols);
    const uintptr_t at = address - load_base;
    size_t lo = 0, hi = function_count; /* the first function that starts after `at` */
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (functions[mid].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || at - functions[lo - 1].start >= functions[lo - 1].size) return false;
    *start = load_base + functions[lo - 1].start;
    *end = *start + functions[lo - 1].size;
    return true;
}

bool ktools_tls_anchor(uintptr_t *offset)
{
    pthread_once(&symbols_once, read_symbols);
    *offset = anchor_offset;
    return anchor_found;
}

/* ---- source lines ------------------------------------------------------------- */

#define WHERE_CACHE 256

typedef struct where_entry {
    uintptr_t pc;
    int line;
    char text[160];
} where_entry;

static pthread_mutex_t where_lock = PTHREAD_MUTEX_INITIALIZER;
static where_entry where_cache[WHERE_CACHE];
static size_t where_count;

/* The part of a path from labs/, solutions/, common/ or bench/ on. */
static const char *shorter_path(const char *path)
{
    static const char *const roots[] = { "/labs/", "/solutions/", "/common/", "/bench/" };
    const char *best = NULL;
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; ++r) {
        const char *at = path, *found;
        while ((found = strstr(at, roots[r]))) best = found > best ? found : best, at = found + 1;
    }
    return best ? best + 1 : path;
}

/* addr2line's answer, "path:line" (maybe with " (discriminator N)"). */
static bool ask_addr2line(uintptr_t pc, char *out, size_t size, int *line)
{
    char exe[1024], command[1200], answer[1024];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = '\0';
    if (strchr(exe, '\'')) return false;
    uintptr_t base = 0;
    dl_iterate_phdr(first_object, &base);
    /* the return address is the instruction after the call: step back into it */
    snprintf(command, sizeof command, "addr2line -i -e '%s' 0x%lx 2>/dev/null", exe,
             (unsigned long)(pc - 1 - base));
    FILE *p = popen(command, "r");
    if (!p) return false;
    const bool got = fgets(answer, sizeof answer, p) != NULL;
    pclose(p);
    if (!got || answer[0] == '?') return false;
    answer[strcspn(answer, " \n")] = '\0';
    char *colon = strrchr(answer, ':');
    if (!colon || colon[1] == '?') return false;
    *line = atoi(colon + 1);
    *colon = '\0';
    const char *path = shorter_path(answer);
    const size_t length = strlen(path) < size ? strlen(path) : size - 1;
    memcpy(out, path, length);
    out[length] = '\0';
    return true;
}

void ktools_where(uintptr_t pc, char *out, size_t size, int *line)
{
    pthread_mutex_lock(&where_lock);
    for (size_t i = 0; i < where_count; ++i)
        if (where_cache[i].pc == pc) {
            snprintf(out, size, "%s", where_cache[i].text);
            *line = where_cache[i].line;
            pthread_mutex_unlock(&where_lock);
            return;
        }
    pthread_mutex_unlock(&where_lock);
    where_entry e = { pc, 0, "" };
    if (!ask_addr2line(pc, e.text, sizeof e.text, &e.line)) {
        snprintf(e.text, sizeof e.text, "an unknown place (instruction 0x%lx: no debug information)",
                 (unsigned long)pc);
        e.line = 0;
    }
    pthread_mutex_lock(&where_lock);
    if (where_count < WHERE_CACHE) where_cache[where_count++] = e;
    pthread_mutex_unlock(&where_lock);
    snprintf(out, size, "%s", e.text);
    *line = e.line;
}

/* ---- instrumented files, and where an address lies ----------------------------- */

static bool instrumented;

bool ktools_instrumented(void) { return __atomic_load_n(&instrumented, __ATOMIC_ACQUIRE); }

bool ktools_mark_instrumented(void) { return !__atomic_exchange_n(&instrumented, true, __ATOMIC_ACQ_REL); }

/* ---- where an address lies ------------------------------------------------------ */

/* The shared array that holds offset `at`, or the one beside the red zone it
 * lies in (the array that ends before it, else the one that starts after). */
static kt_place shared_place(uintptr_t at)
{
    size_t n;
    const kt_shared_array *a = ktools_shared_arrays(&n);
    size_t lo = 0, hi = n; /* the first array that starts after `at` */
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (a[mid].offset <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && at - a[lo - 1].offset < a[lo - 1].size) return (kt_place){ KT_SHARED, (uint32_t)(lo - 1) };
    if (lo > 0) return (kt_place){ KT_SHARED_OOB, (uint32_t)(lo - 1) };
    if (lo < n) return (kt_place){ KT_SHARED_OOB, (uint32_t)lo };
    return (kt_place){ KT_NOT_WATCHED, 0 };
}

kt_place ktools_shared_region(const kt_thread *t, kt_place place, uintptr_t address)
{
    if ((place.space == KT_SHARED || place.space == KT_SHARED_OOB) && place.region == KT_STATIC_SHARED)
        place.region = shared_place(address - t->tls_base).region;
    return place;
}
