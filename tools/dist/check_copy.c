/* check_copy.c: proves that a student copy (./lab dist) gives no answer away.
 *
 *   check_copy SOLUTIONS_DIR SKELETONS_DIR COPY_DIR
 *
 * Fails (exit 1), naming each finding, when COPY_DIR holds
 *   - a directory or file named solutions, or any *.patch file;
 *   - a known-wrong version: a line "# catches: ...", or the "# mistake: ..."
 *     text of any patch under SOLUTIONS_DIR (the authors' table lists them);
 *   - the authors' table of known-wrong versions (its marker or its header);
 *   - the body of any function of a solution (the .c and .cuh files of
 *     SOLUTIONS_DIR/NN_name/), comments and whitespace aside, in any file.
 * A body is compared without its braces and its last `return ...;` (the same
 * statements in a function of another name and type are the same answer).
 * A solution's function whose body is also in the lab's skeleton
 * (SKELETONS_DIR/NN_name/ of the same file name) is given code, not an
 * answer, and bodies shorter than MIN_BODY characters (whitespace aside) say
 * too little to tell; both are counted in the summary line. Exit 0: nothing
 * found; 2: a bad command line or an unreadable file. Tests kit.dist and
 * kit.dist_catches (labs/CMakeLists.txt). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MIN_BODY 30

typedef struct text {
    char *data;
    size_t size, capacity;
} text;

static void append(text *t, const char *s, size_t n)
{
    if (t->size + n + 1 > t->capacity) {
        t->capacity = (t->size + n + 1) * 2;
        t->data = realloc(t->data, t->capacity);
        if (!t->data) {
            fprintf(stderr, "check_copy: out of memory\n");
            exit(2);
        }
    }
    memcpy(t->data + t->size, s, n);
    t->size += n;
    t->data[t->size] = '\0';
}

static bool read_file(const char *path, text *out)
{
    *out = (text){ 0 };
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char buffer[65536];
    size_t n;
    append(out, "", 0);
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0) append(out, buffer, n);
    fclose(f);
    return true;
}

/* ---- C text without its comments; then without its whitespace ---------------- */

/* src without comments (each replaced by a space); string and character
 * literals are kept as they are, comment markers inside them included. */
static text without_comments(const char *src)
{
    text out = { 0 };
    append(&out, "", 0);
    for (const char *p = src; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
            append(&out, " ", 1);
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') ++p;
        } else if (*p == '"' || *p == '\'') {
            const char quote = *p;
            const char *start = p++;
            while (*p && *p != quote && *p != '\n') p += p[0] == '\\' && p[1] ? 2 : 1;
            if (*p == quote) ++p;
            append(&out, start, (size_t)(p - start));
        } else {
            append(&out, p++, 1);
        }
    }
    return out;
}

static text without_space(const char *src)
{
    text out = { 0 };
    append(&out, "", 0);
    for (const char *p = src; *p; ++p)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\f' && *p != '\v')
            append(&out, p, 1);
    return out;
}

/* The comparable form of any file: no comments, no whitespace. */
static text comparable(const char *src)
{
    text code = without_comments(src);
    text flat = without_space(code.data);
    free(code.data);
    return flat;
}

/* ---- the functions of a C file -------------------------------------------------- */

typedef struct function {
    char name[128];
    char *body; /* comparable form, without braces and a last return (core_of) */
    char file[512];
    bool given; /* the same body is in the skeleton */
} function;

typedef struct functions {
    function *items;
    int count, capacity;
} functions;

/* The identifier that ends just before `end` (spaces skipped), into name. */
static void identifier_before(const char *start, const char *end, char *name, size_t size)
{
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n')) --end;
    const char *begin = end;
    while (begin > start &&
           (begin[-1] == '_' || (begin[-1] >= 'a' && begin[-1] <= 'z') ||
            (begin[-1] >= 'A' && begin[-1] <= 'Z') || (begin[-1] >= '0' && begin[-1] <= '9')))
        --begin;
    snprintf(name, size, "%.*s", (int)(end - begin), begin);
}

/* A body's statements, in place: without its braces and without a last
 * `return ...;`, so that the same statements under another name, ending with
 * another return (a void copy of a function that returns a status), are
 * found too. Kept whole when what is left would say too little. */
static char *core_of(char *flat)
{
    size_t n = strlen(flat);
    if (n < 2) return flat;
    char *core = flat + 1;
    core[n - 2] = '\0';
    n -= 2;
    char *last = NULL;
    for (char *r = strstr(core, "return"); r; r = strstr(r + 1, "return")) last = r;
    if (last && (last == core || last[-1] == ';' || last[-1] == '}' || last[-1] == '{') &&
        strchr(last, ';') == core + n - 1 && !strpbrk(last, "{}") && (size_t)(last - core) >= MIN_BODY)
        *last = '\0';
    memmove(flat, core, strlen(core) + 1);
    return flat;
}

/* Every top-level brace block that follows a ")" (a function's body, not an
 * initialiser or a struct), from code without comments. Preprocessor lines
 * and literals are skipped. */
static void collect_functions(const char *path, const char *code, functions *out)
{
    int depth = 0;
    const char *body_start = NULL, *paren_close = NULL;
    bool line_start = true;
    for (const char *p = code; *p; ++p) {
        if (line_start && depth == 0) {
            const char *q = p;
            while (*q == ' ' || *q == '\t') ++q;
            if (*q == '#') { /* a directive, with its continued lines */
                while (*q && !(*q == '\n' && q[-1] != '\\')) ++q;
                p = q;
                if (!*p) break;
                continue; /* p is at the newline: line_start again */
            }
        }
        line_start = *p == '\n';
        if (*p == '"' || *p == '\'') {
            const char quote = *p++;
            while (*p && *p != quote && *p != '\n') p += p[0] == '\\' && p[1] ? 2 : 1;
            if (!*p) break;
            continue;
        }
        if (depth == 0 && *p == ')') paren_close = p;
        if (depth == 0 && (*p == ';' || *p == '=')) paren_close = NULL;
        if (*p == '{') {
            if (depth == 0) {
                const char *q = p;
                while (q > code && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n')) --q;
                body_start = q > code && q[-1] == ')' && paren_close ? p : NULL;
            }
            ++depth;
        } else if (*p == '}' && depth > 0 && --depth == 0 && body_start) {
            if (out->count == out->capacity) {
                out->capacity = out->capacity ? 2 * out->capacity : 64;
                out->items = realloc(out->items, (size_t)out->capacity * sizeof *out->items);
                if (!out->items) exit(2);
            }
            function *f = &out->items[out->count++];
            memset(f, 0, sizeof *f);
            /* The name: the identifier before the "(" that opens the parameters. */
            int parens = 0;
            const char *open = paren_close;
            for (; open > code; --open) {
                if (*open == ')') ++parens;
                if (*open == '(' && --parens == 0) break;
            }
            identifier_before(code, open, f->name, sizeof f->name);
            snprintf(f->file, sizeof f->file, "%s", path);
            text body = { 0 };
            append(&body, body_start, (size_t)(p - body_start + 1));
            text flat = without_space(body.data);
            free(body.data);
            f->body = core_of(flat.data);
            body_start = NULL;
            paren_close = NULL;
        }
    }
}

/* ---- walking directories ---------------------------------------------------------- */

typedef void (*visit_fn)(const char *path, const char *name, bool is_dir, void *context);

static void walk(const char *dir, visit_fn visit, void *context)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "check_copy: cannot read the directory %s\n", dir);
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        const bool is_dir = S_ISDIR(st.st_mode);
        if (!is_dir && !S_ISREG(st.st_mode)) continue;
        visit(path, e->d_name, is_dir, context);
        if (is_dir) walk(path, visit, context);
    }
    closedir(d);
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* ---- what the solutions hold ---------------------------------------------------- */

typedef struct answers {
    const char *solutions_dir, *skeletons_dir;
    functions functions;
    char **mistakes; /* the "# mistake:" texts, comparable form */
    int nmistakes;
} answers;

static void learn(const char *path, const char *name, bool is_dir, void *context)
{
    answers *a = context;
    if (is_dir) return;
    if (ends_with(name, ".patch")) {
        text patch;
        if (!read_file(path, &patch)) return;
        for (char *line = strtok(patch.data, "\n"); line; line = strtok(NULL, "\n")) {
            if (strncmp(line, "# mistake: ", 11)) continue;
            a->mistakes = realloc(a->mistakes, (size_t)(a->nmistakes + 1) * sizeof *a->mistakes);
            if (!a->mistakes) exit(2);
            a->mistakes[a->nmistakes++] = without_space(line + 11).data;
        }
        free(patch.data);
        return;
    }
    if (!ends_with(name, ".c") && !ends_with(name, ".cuh")) return;
    text src;
    if (!read_file(path, &src)) {
        fprintf(stderr, "check_copy: cannot read %s\n", path);
        exit(2);
    }
    text code = without_comments(src.data);
    const int first = a->functions.count;
    collect_functions(path, code.data, &a->functions);
    /* The skeleton's file of the same lab and name: its bodies are given. */
    char skeleton[4096];
    const char *relative = path + strlen(a->solutions_dir);
    snprintf(skeleton, sizeof skeleton, "%s%s", a->skeletons_dir, relative);
    text given;
    if (read_file(skeleton, &given)) {
        text flat = comparable(given.data);
        for (int i = first; i < a->functions.count; ++i)
            a->functions.items[i].given = strstr(flat.data, a->functions.items[i].body) != NULL;
        free(flat.data), free(given.data);
    }
    free(code.data), free(src.data);
}

/* ---- the copy ------------------------------------------------------------------- */

typedef struct findings {
    const answers *answers;
    const char *copy_dir;
    int files, found;
} findings;

static void report(findings *f, const char *path, const char *what)
{
    printf("check_copy: %s: %s\n", path + strlen(f->copy_dir) + 1, what);
    f->found++;
}

static void inspect(const char *path, const char *name, bool is_dir, void *context)
{
    findings *f = context;
    if (!strcmp(name, "solutions")) report(f, path, "named solutions");
    if (is_dir) return;
    f->files++;
    if (ends_with(name, ".patch")) report(f, path, "a patch file");
    text content;
    if (!read_file(path, &content)) {
        fprintf(stderr, "check_copy: cannot read %s\n", path);
        exit(2);
    }
    if (memchr(content.data, '\0', content.size)) { /* binary: only whole-text findings apply */
        free(content.data);
        return;
    }
    if (strstr(content.data, "\n# catches: ") || !strncmp(content.data, "# catches: ", 11))
        report(f, path, "a known-wrong version (a line \"# catches: ...\")");
    if (strstr(content.data, "<!-- known-wrong versions") ||
        strstr(content.data, "| mistake | what the student did |"))
        report(f, path, "the authors' table of known-wrong versions");
    text flat = comparable(content.data);
    const answers *a = f->answers;
    for (int i = 0; i < a->nmistakes; ++i)
        if (strlen(a->mistakes[i]) >= MIN_BODY && strstr(flat.data, a->mistakes[i])) {
            report(f, path, "the text of a known-wrong version's \"# mistake:\" line");
            break;
        }
    for (int i = 0; i < a->functions.count; ++i) {
        const function *fn = &a->functions.items[i];
        if (fn->given || strlen(fn->body) < MIN_BODY) continue;
        if (strstr(flat.data, fn->body)) {
            char what[1024];
            snprintf(what, sizeof what, "the body of %s() of %s", fn->name,
                     fn->file + strlen(a->solutions_dir) - strlen("solutions"));
            report(f, path, what);
        }
    }
    free(flat.data), free(content.data);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check_copy SOLUTIONS_DIR SKELETONS_DIR COPY_DIR\n");
        return 2;
    }
    answers a = { .solutions_dir = argv[1], .skeletons_dir = argv[2] };
    walk(a.solutions_dir, learn, &a);
    int answer_bodies = 0, given = 0, short_bodies = 0;
    for (int i = 0; i < a.functions.count; ++i) {
        if (a.functions.items[i].given)
            given++;
        else if (strlen(a.functions.items[i].body) < MIN_BODY)
            short_bodies++;
        else
            answer_bodies++;
    }
    if (answer_bodies == 0) {
        fprintf(stderr, "check_copy: no solution function found under %s: is it the solutions directory?\n",
                a.solutions_dir);
        return 2;
    }
    findings f = { .answers = &a, .copy_dir = argv[3] };
    walk(f.copy_dir, inspect, &f);
    printf("check_copy: %d files of %s against %d solution functions (%d more are given in the skeletons, "
           "%d are under %d characters) and %d known-wrong versions: %d findings\n",
           f.files, f.copy_dir, answer_bodies, given, short_bodies, MIN_BODY, a.nmistakes, f.found);
    return f.found ? 1 : 0;
}
