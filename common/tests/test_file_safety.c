/* test_file_safety.c: files.h never harms what is not ours and never hangs.
 *
 * Outputs: only an absent path or a regular file is written; a device, a FIFO,
 * a socket, a directory or a symbolic link (even to a regular file) is refused
 * before anything is touched, and the test checks with stat that nothing was
 * replaced or deleted. A write that fails halfway (a file size limit standing
 * in for a full disk) leaves the destination as it was and no temporary file.
 * Inputs: a FIFO does not block, a directory or a device is named as such.
 *
 * Everything happens in a scratch directory made with mkdtemp in the test's
 * build folder, never on real /dev entries: as root the test makes its own
 * device node there (mknod, /dev/null's numbers 1,3); without the right to,
 * that case is skipped and says so. A read-only directory cannot be tested as
 * root (root writes through chmod 0555), so that case runs only for other users. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, symlink, mkfifo, lstat: POSIX, not C17 */
#define _DEFAULT_SOURCE         /* mknod, makedev */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "labkit/files.h"
#include "labkit/status.h"
#include "test_files.h"

static char dir[] = "test_file_safety_XXXXXX";

static void path_in_dir(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", dir, name);
}

/* ---- things that are not regular files, made in the scratch directory ------------ */

typedef enum special {
    SPECIAL_DIRECTORY,
    SPECIAL_FIFO,
    SPECIAL_SOCKET,
    SPECIAL_DEVICE,
    SPECIAL_LINK
} special;

static const char *const special_names[] = { "a directory", "a FIFO (named pipe)", "a socket",
                                             "a character device", "a symbolic link" };

/* Makes one at path; false (with the reason in `why`) when this user cannot. */
static bool make_special(special kind, const char *path, char *why, size_t size)
{
    int rc = -1;
    switch (kind) {
    case SPECIAL_DIRECTORY: rc = mkdir(path, 0755); break;
    case SPECIAL_FIFO: rc = mkfifo(path, 0644); break;
    case SPECIAL_DEVICE: rc = mknod(path, S_IFCHR | 0666, makedev(1, 3)); break; /* like /dev/null */
    case SPECIAL_LINK: rc = symlink("/proc/self/fd/1", path); break;
    case SPECIAL_SOCKET: {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
        rc = fd >= 0 ? bind(fd, (struct sockaddr *)&address, sizeof address) : -1;
        if (fd >= 0) close(fd); /* the socket file stays */
        break;
    }
    }
    if (rc != 0) snprintf(why, size, "cannot make %s here (%s)", special_names[kind], strerror(errno));
    return rc == 0;
}

/* Whether two lstat results describe the same, unchanged file. */
static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_mode == b->st_mode &&
           a->st_rdev == b->st_rdev && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* ---- outputs ---------------------------------------------------------------------------- */

static void test_output_check_refuses_every_kind_of_special_file_and_touches_nothing(void)
{
    for (special kind = SPECIAL_DIRECTORY; kind <= SPECIAL_LINK; kind++) {
        char path[256], why[256];
        path_in_dir(path, sizeof path, "target.png");
        if (!make_special(kind, path, why, sizeof why)) {
            printf("  note: %s; that case is skipped\n", why);
            continue;
        }
        struct stat before, after;
        lstat(path, &before);
        int entries = count_entries(dir);

        clear_error();
        status s = output_check(path, "--plot");
        EXPECT_MSG(s != STATUS_OK, "%s was accepted as an output", special_names[kind]);
        EXPECT_CONTAINS(last_error(), "--plot");
        EXPECT_CONTAINS(last_error(), "target.png");
        EXPECT_CONTAINS(last_error(), special_names[kind]);
        if (kind == SPECIAL_LINK) {
            EXPECT_CONTAINS(last_error(), "give the file itself");
            EXPECT_CONTAINS(last_error(), "/proc/self/fd/1");
        }

        /* Writing is refused as well, before anything is created. */
        output_file o;
        EXPECT(output_begin(&o, path) != STATUS_OK);
        EXPECT(o.stream == NULL && o.temp_path == NULL);

        EXPECT(lstat(path, &after) == 0 && same_file(&before, &after));
        EXPECT(count_entries(dir) == entries);
        if (kind == SPECIAL_DIRECTORY)
            rmdir(path);
        else
            unlink(path);
    }
}

static void test_a_symbolic_link_to_a_regular_file_is_refused_too(void)
{
    char target[256], link[256];
    path_in_dir(target, sizeof target, "real.csv");
    path_in_dir(link, sizeof link, "link.csv");
    FILE *f = fopen(target, "w");
    REQUIRE(f != NULL);
    fputs("keep me\n", f);
    fclose(f);
    REQUIRE(symlink("real.csv", link) == 0);
    EXPECT_REFUSED(output_check(link, "--csv"), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "symbolic link (to real.csv)");
    char content[64];
    EXPECT(read_file(target, content, sizeof content) == 8 && strcmp(content, "keep me\n") == 0);
cleanup:
    unlink(link);
    unlink(target);
}

static void test_output_check_accepts_a_new_file_a_regular_file_and_standard_output(void)
{
    char path[256];
    path_in_dir(path, sizeof path, "new.csv");
    EXPECT_OK(output_check(path, "--csv"));
    EXPECT(!file_exists(path)); /* a check creates nothing */
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    EXPECT_OK(output_check(path, "--csv"));
    EXPECT_OK(output_check("-", "--csv"));
    EXPECT(output_is_stdout("-") && !output_is_stdout("-.csv") && !output_is_stdout(NULL));
    unlink(path);
}

static void test_output_check_refuses_missing_and_unusable_directories(void)
{
    char path[256];
    path_in_dir(path, sizeof path, "no/such/dir/x.csv");
    EXPECT_REFUSED(output_check(path, "--csv"), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "no/such/dir");
    EXPECT_CONTAINS(last_error(), "No such file or directory");
    EXPECT_CONTAINS(last_error(), "mkdir -p");

    /* A regular file where the directory should be. */
    char file[256];
    path_in_dir(file, sizeof file, "plain");
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    path_in_dir(path, sizeof path, "plain/x.csv");
    EXPECT_REFUSED(output_check(path, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "not a directory");
    unlink(file);

    EXPECT_REFUSED(output_check("", "--csv"), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(output_check(NULL, "--csv"), STATUS_BAD_ARGUMENT);
    path_in_dir(path, sizeof path, "");
    EXPECT_REFUSED(output_check(path, "--csv"), STATUS_BAD_ARGUMENT); /* "dir/": no file name */
    EXPECT_CONTAINS(last_error(), "names a directory");
}

static void test_a_read_only_directory_is_refused_before_any_work(void)
{
    /* A read-only mount refuses even root: look for one (a container's /proc/sys,
     * /sys). The check only looks; nothing is ever created there. */
    const char *const candidates[] = { "/proc/sys", "/sys", "/proc" };
    bool tested = false;
    for (int i = 0; i < 3 && !tested; i++) {
        struct statvfs info;
        if (statvfs(candidates[i], &info) != 0 || !(info.f_flag & ST_RDONLY)) continue;
        char path[256];
        snprintf(path, sizeof path, "%s/labkit-test.csv", candidates[i]);
        EXPECT_REFUSED(output_check(path, "--csv"), STATUS_IO_FAILED);
        EXPECT_CONTAINS(last_error(), "cannot create files in the directory");
        EXPECT_CONTAINS(last_error(), "Read-only file system");
        tested = true;
    }

    char ro[256], path[300];
    path_in_dir(ro, sizeof ro, "read-only");
    REQUIRE(mkdir(ro, 0555) == 0);
    snprintf(path, sizeof path, "%s/x.csv", ro);
    if (geteuid() != 0) {
        EXPECT_REFUSED(output_check(path, "--csv"), STATUS_IO_FAILED);
        EXPECT_CONTAINS(last_error(), "cannot create files in the directory");
        EXPECT_CONTAINS(last_error(), "Permission denied");
        goto cleanup;
    }
    /* Root writes through chmod 0555: the check runs as "nobody" in a child,
     * who may enter the scratch directory (mkdtemp makes it 0700) meanwhile. */
    fflush(stdout);
    chmod(dir, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        struct stat info;
        if (setgid(65534) != 0 || setuid(65534) != 0 || stat(ro, &info) != 0) _exit(77); /* cannot test */
        status s = output_check(path, "--csv");
        _exit(s == STATUS_IO_FAILED && strstr(last_error(), "cannot create files in the directory") &&
                      strstr(last_error(), "Permission denied")
                  ? 0
                  : 1);
    }
    int wait_status = 0;
    waitpid(pid, &wait_status, 0);
    chmod(dir, 0700);
    int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    if (code == 77) {
        printf("  note: the read-only directory case needs a user other than root who can reach %s; "
               "skipped%s\n",
               ro, tested ? " (a read-only mount was checked instead)" : "");
        if (!tested) harness_skip("no read-only directory could be tested here");
    } else {
        EXPECT_MSG(code == 0, "as user nobody, output_check did not refuse the read-only %s (exit %d)", ro,
                   code);
    }
cleanup:
    rmdir(ro);
}

static void test_a_250_character_name_works_and_a_256_character_one_is_refused(void)
{
    char name[300], path[400];
    memset(name, 'a', 246);
    memcpy(name + 246, ".csv", 5); /* 250 characters */
    path_in_dir(path, sizeof path, name);
    output_file o;
    REQUIRE_OK(output_begin(&o, path));
    EXPECT(strstr(o.temp_path, "/.labkit-") != NULL);
    EXPECT(strlen(o.temp_path) < strlen(dir) + 20); /* short, whatever the name */
    fputs("n\n1\n", o.stream);
    EXPECT_OK(output_commit(&o));
    EXPECT(file_size(path) == 4);
    EXPECT(count_entries(dir) == 1);
    unlink(path);

    memset(name, 'b', 252);
    memcpy(name + 252, ".csv", 5); /* 256 characters: more than any Linux file system takes */
    path_in_dir(path, sizeof path, name);
    EXPECT_REFUSED(output_check(path, "--csv"), STATUS_BAD_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "256 characters");
cleanup:
    return;
}

static void test_a_file_is_written_under_a_temporary_name_then_renamed_into_place(void)
{
    char path[256], content[64];
    path_in_dir(path, sizeof path, "whole.csv");
    FILE *old = fopen(path, "w");
    REQUIRE(old != NULL);
    fputs("old\n", old);
    fclose(old);

    output_file o;
    REQUIRE_OK(output_begin(&o, path));
    fputs("new\n", o.stream);
    EXPECT(count_entries(dir) == 2); /* the old file and the temporary one */
    read_file(path, content, sizeof content);
    EXPECT_STREQ(content, "old\n"); /* untouched until the commit */
    EXPECT_OK(output_commit(&o));
    read_file(path, content, sizeof content);
    EXPECT_STREQ(content, "new\n");
    EXPECT(count_entries(dir) == 1);

    /* Readable as any new file is (the umask's mode), not private as mkstemp makes it. */
    struct stat info;
    mode_t mask = umask(0);
    umask(mask);
    EXPECT(stat(path, &info) == 0 && (info.st_mode & 0777) == (0666 & ~mask));

    /* Discarded: nothing at the destination, no temporary file. */
    unlink(path);
    REQUIRE_OK(output_begin(&o, path));
    fputs("never\n", o.stream);
    output_discard(&o);
    EXPECT(!file_exists(path));
    EXPECT(count_entries(dir) == 0);
cleanup:
    unlink(path);
}

static void test_a_destination_that_became_a_directory_is_not_replaced(void)
{
    char path[256];
    path_in_dir(path, sizeof path, "raced.csv");
    output_file o;
    REQUIRE_OK(output_begin(&o, path));
    fputs("data\n", o.stream);
    REQUIRE(mkdir(path, 0755) == 0); /* made while the file was being written */
    EXPECT_REFUSED(output_commit(&o), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "raced.csv");
    EXPECT_CONTAINS(last_error(), "directory");
    struct stat info;
    EXPECT(lstat(path, &info) == 0 && S_ISDIR(info.st_mode));
    EXPECT(count_entries(dir) == 1); /* the directory; no temporary file */
cleanup:
    rmdir(path);
}

static void test_a_write_that_fails_halfway_leaves_the_old_file_and_no_temporary(void)
{
    /* A file size limit makes writes fail with EFBIG, as a full disk makes them
     * fail with ENOSPC; SIGXFSZ is ignored so that the write returns the error. */
    char path[256], content[64];
    struct rlimit saved, small;
    getrlimit(RLIMIT_FSIZE, &saved);
    small = saved;
    small.rlim_cur = 4096;
    void (*previous)(int) = signal(SIGXFSZ, SIG_IGN);
    path_in_dir(path, sizeof path, "full.csv");
    FILE *old = fopen(path, "w");
    REQUIRE(old != NULL);
    fputs("old\n", old);
    fclose(old);

    output_file o;
    status begun = output_begin(&o, path);
    if (begun == STATUS_OK) {
        REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
        for (int i = 0; i < 2000; i++) fputs("0123456789\n", o.stream);
        clear_error();
        EXPECT_STATUS(output_commit(&o), STATUS_IO_FAILED);
        setrlimit(RLIMIT_FSIZE, &saved);
        EXPECT_CONTAINS(last_error(), "full.csv");
        EXPECT_CONTAINS(last_error(), "left as it was");
    }
    EXPECT_OK(begun);
    read_file(path, content, sizeof content);
    EXPECT_STREQ(content, "old\n");
    EXPECT(count_entries(dir) == 1);
cleanup:
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, previous);
    unlink(path);
}

/* The child of the test below: it sends its own standard output to standard error for good. */
static void keep_standard_output_for_the_data(void)
{
    if (output_claim_stdout() != STATUS_OK || output_claim_stdout() != STATUS_OK) _exit(3);
    printf("the table\n");
    fflush(stdout); /* this child's stdout was used before: its buffering is the test's */
    output_file o;
    if (output_begin(&o, "-") != STATUS_OK || o.stream != NULL) _exit(4);
    fputs("n,x\n1,2\n", output_stdout());
    _exit(output_commit(&o) == STATUS_OK ? 0 : 5);
}

static void test_standard_output_can_be_kept_for_the_data(void)
{
    char got_out[256], got_err[256];
    const int wait_status = run_in_child(keep_standard_output_for_the_data, got_out, got_err, sizeof got_out);
    EXPECT(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    EXPECT_STREQ(got_out, "n,x\n1,2\n");
    EXPECT_STREQ(got_err, "the table\n");
}

/* ---- inputs ----------------------------------------------------------------------------- */

static void test_input_open_gives_a_regular_file_and_its_size(void)
{
    char path[256], link[256];
    path_in_dir(path, sizeof path, "input.bin");
    path_in_dir(link, sizeof link, "input-link.bin");
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    fwrite("0123456789", 1, 10, f);
    fclose(f);
    FILE *in = NULL;
    int64_t size = -1;
    EXPECT_OK(input_open(path, &in, &size));
    EXPECT(size == 10);
    char buffer[16] = "";
    EXPECT(in && fread(buffer, 1, 16, in) == 10 && memcmp(buffer, "0123456789", 10) == 0);
    if (in) fclose(in);

    /* Reading through a symbolic link harms nothing: it is followed. */
    REQUIRE(symlink("input.bin", link) == 0);
    EXPECT_OK(input_open(link, &in, NULL));
    if (in) fclose(in);
cleanup:
    unlink(link);
    unlink(path);
}

static void test_input_open_never_blocks_and_names_what_it_found(void)
{
    alarm(10); /* a FIFO opened the usual way would block here forever */
    for (special kind = SPECIAL_DIRECTORY; kind <= SPECIAL_DEVICE; kind++) {
        char path[256], why[256];
        path_in_dir(path, sizeof path, "train-images-idx3-ubyte");
        if (!make_special(kind, path, why, sizeof why)) {
            printf("  note: %s; that case is skipped\n", why);
            continue;
        }
        FILE *in = (FILE *)path; /* any non-NULL: input_open must reset it */
        EXPECT_REFUSED(input_open(path, &in, NULL), STATUS_IO_FAILED);
        EXPECT(in == NULL);
        EXPECT_CONTAINS(last_error(), special_names[kind]);
        EXPECT_CONTAINS(last_error(), "train-images-idx3-ubyte");
        EXPECT_CONTAINS(last_error(), "not a regular file");
        if (kind == SPECIAL_DIRECTORY)
            rmdir(path);
        else
            unlink(path);
    }
    alarm(0);

    char path[256];
    path_in_dir(path, sizeof path, "absent");
    FILE *in = NULL;
    EXPECT_REFUSED(input_open(path, &in, NULL), STATUS_IO_FAILED);
    EXPECT_CONTAINS(last_error(), "No such file or directory");
    EXPECT_REFUSED(input_open(NULL, &in, NULL), STATUS_BAD_ARGUMENT);
    EXPECT_REFUSED(input_open(path, NULL, NULL), STATUS_BAD_ARGUMENT);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("test_file_safety: mkdtemp");
        return 1;
    }
    RUN_TEST(test_output_check_refuses_every_kind_of_special_file_and_touches_nothing);
    RUN_TEST(test_a_symbolic_link_to_a_regular_file_is_refused_too);
    RUN_TEST(test_output_check_accepts_a_new_file_a_regular_file_and_standard_output);
    RUN_TEST(test_output_check_refuses_missing_and_unusable_directories);
    RUN_TEST(test_a_read_only_directory_is_refused_before_any_work);
    RUN_TEST(test_a_250_character_name_works_and_a_256_character_one_is_refused);
    RUN_TEST(test_a_file_is_written_under_a_temporary_name_then_renamed_into_place);
    RUN_TEST(test_a_destination_that_became_a_directory_is_not_replaced);
    RUN_TEST(test_a_write_that_fails_halfway_leaves_the_old_file_and_no_temporary);
    RUN_TEST(test_standard_output_can_be_kept_for_the_data);
    RUN_TEST(test_input_open_gives_a_regular_file_and_its_size);
    RUN_TEST(test_input_open_never_blocks_and_names_what_it_found);
    remove_tree(dir);
    return harness_finish();
}
