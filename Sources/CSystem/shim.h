#ifndef TRIPBOARD_CSYSTEM_SHIM_H
#define TRIPBOARD_CSYSTEM_SHIM_H
/* Linux headers that Swift's Glibc module does not cover. */
#include <sys/signalfd.h>
#include <spawn.h>

/* GNU extensions (glibc >= 2.34) that Swift's Glibc module hides because it is built without
   _GNU_SOURCE; same prototypes as <unistd.h> and <spawn.h>. ChildProcess needs both: a pipe that is
   close-on-exec from birth, and a child that inherits no descriptor above stderr. */
int pipe2(int pipefd[2], int flags);
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* <fcntl.h>, GNU: start writeback of a range now (SYNC_FILE_RANGE_WRITE = 2), so that a large
   copy's final fsync finds little left to write. Not a durability guarantee by itself. */
int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);
/* Also a GNU extension (<unistd.h>): the container migration makes a filesystem's renames durable at once. */
int syncfs(int fd);
/* <stdio.h>, GNU: rename that fails with EEXIST instead of replacing (RENAME_NOREPLACE = 1). */
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
/* <unistd.h>, GNU: an in-kernel copy between two files (no pass through user space; on one
   filesystem it may share extents). Across filesystem types it fails with EXDEV; the container
   migration then falls back to read/write. */
#include <sys/types.h>
ssize_t copy_file_range(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len, unsigned int flags);
/* prctl(2) is variadic, which Swift cannot call: fixed-argument wrappers for the one setting
   TripBoard changes. A process that is not dumpable leaves no core and cannot be attached to or
   have its memory read (/proc/PID/mem) by other processes of the same user. */
#include <sys/prctl.h>
static inline int tripboard_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL); }
static inline int tripboard_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
/* The kernel's key retention service (keyrings(7)): add_key(2) and keyctl(2) have no glibc
   wrappers (libkeyutils provides them; these are the same system calls, without the library).
   keyctl is variadic, which Swift cannot call: one fixed-argument wrapper per shape used. */
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>
static inline long tripboard_add_key(const char *type, const char *description, const void *payload,
                                     size_t length, int keyring) {
    return syscall(__NR_add_key, type, description, payload, length, keyring);
}
static inline long tripboard_keyctl(int operation, unsigned long a, unsigned long b, unsigned long c, unsigned long d) {
    return syscall(__NR_keyctl, operation, a, b, c, d);
}
/* memfd_create(2) (<sys/mman.h>, GNU) and its seals (fcntl F_ADD_SEALS, variadic): a ticket being
   shared is staged in memory, never on a disk, and handed to the PDF worker sealed against
   changes. */
#include <fcntl.h>
int memfd_create(const char *name, unsigned int flags);
static inline int tripboard_memfd_create(const char *name) { return memfd_create(name, 0x0001U | 0x0002U); /* MFD_CLOEXEC | MFD_ALLOW_SEALING */ }
static inline int tripboard_seal_contents(int fd) {
    /* F_ADD_SEALS = 1033; F_SEAL_SEAL 1 | F_SEAL_SHRINK 2 | F_SEAL_GROW 4 | F_SEAL_WRITE 8 */
    return fcntl(fd, 1033, 1 | 2 | 4 | 8);
}
#endif
