#ifndef TRIPBOARD_CSQLITE_SHIM_H
#define TRIPBOARD_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/// SQLITE_TRANSIENT is a cast macro that does not import into Swift.
static inline sqlite3_destructor_type tripboard_sqlite_transient(void) { return SQLITE_TRANSIENT; }
/// sqlite3_db_config is variadic, which Swift cannot call: one fixed-argument form for the
/// integer options (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE and the like).
static inline int tripboard_sqlite_db_config_int(sqlite3 *db, int option, int value, int *current) {
    return sqlite3_db_config(db, option, value, current);
}
/// sqlite3_config is variadic too: the fixed-argument form for the integer options, called before
/// SQLite initialises (afterwards it answers SQLITE_MISUSE and changes nothing).
static inline int tripboard_sqlite_config_int(int option, int value) {
    return sqlite3_config(option, value);
}
/// Whether a process other than this one has `db`'s main file open: SQLite's unix VFS holds a
/// read lock on the file's shared-lock bytes (PENDING_BYTE + 2, 510 bytes) for as long as a
/// WAL-mode connection is open, and F_GETLK does not report this process's own locks. 1: another
/// process has it open; 0: none; -1: cannot tell. Each probed file keeps its descriptor for the
/// life of the process, in a table of at most 16 files (past that: -1): closing any descriptor of
/// a file drops every POSIX lock this process holds on it, and this process's other connections
/// to the same file would lose SQLite's locks. Only `Connection` calls it (one copy of the table).
static inline int tripboard_another_process_has_open(sqlite3 *db) {
    enum { capacity = 16 };
    static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    static struct { int fd; dev_t device; ino_t inode; } probes[capacity];
    static int count = 0;
    const char *path = sqlite3_db_filename(db, "main");
    if (path == NULL || path[0] == 0) return -1;
    struct stat named;
    if (stat(path, &named) != 0) return -1;
    pthread_mutex_lock(&mutex);
    int probe = -1;
    for (int index = 0; index < count; index++) {
        if (probes[index].device == named.st_dev && probes[index].inode == named.st_ino) probe = probes[index].fd;
    }
    if (probe < 0 && count < capacity) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat opened;
        if (fd >= 0 && fstat(fd, &opened) == 0) {
            /* Kept whatever file it turned out to be (closing it could drop locks). */
            probes[count].fd = fd;
            probes[count].device = opened.st_dev;
            probes[count].inode = opened.st_ino;
            count++;
            if (opened.st_dev == named.st_dev && opened.st_ino == named.st_ino) probe = fd;
        }
    }
    int answer = -1;
    if (probe >= 0) {
        struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0x40000002, .l_len = 510 };
        if (fcntl(probe, F_GETLK, &lock) == 0) answer = lock.l_type == F_UNLCK ? 0 : 1;
    }
    pthread_mutex_unlock(&mutex);
    return answer;
}
#endif
