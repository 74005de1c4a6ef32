#ifndef TRIPBOARD_CSQLITE_SHIM_H
#define TRIPBOARD_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <fcntl.h>
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
/// process has it open; 0: none; -1: cannot tell. The probe's descriptor is left in `*probe`
/// (or -1): close it with `tripboard_close_probe` only after the connection is closed, since
/// closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's too.
static inline int tripboard_another_process_has_open(sqlite3 *db, int *probe) {
    *probe = -1;
    const char *path = sqlite3_db_filename(db, "main");
    if (path == NULL || path[0] == 0) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return -1;
    *probe = fd;
    struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0x40000002, .l_len = 510 };
    if (fcntl(fd, F_GETLK, &lock) != 0) return -1;
    return lock.l_type == F_UNLCK ? 0 : 1;
}
static inline void tripboard_close_probe(int probe) {
    if (probe >= 0) close(probe);
}
#endif
