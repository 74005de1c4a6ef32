// The sealed-page VFS as a SQLite loadable extension, for the sqlite3 shell that
// `app container sqlite` runs (docs/cli.md): `.load` registers the VFS and reads the page key from
// the descriptor TRIPBOARD_PAGE_KEY_FD names (48 bytes: the key, then the file id; the descriptor
// is closed after); every connection opened afterwards through the VFS (`.open
// file:PATH?vfs=tripboard-sealed`) is given that key, the reserve and `temp_store = MEMORY` as it
// opens. The key is never in argv or the environment, only in this process's guarded memory.
//
// The library links libsqlite3.so and calls SQLite directly: it is loaded only into a process
// that links the same library (Debian's sqlite3 shell does).
#define _GNU_SOURCE /* dladdr */
#include "tripboard_sealed_pages_extension.h"
#include "tripboard_sealed_pages.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>

static uint8_t *given; /* 48 bytes, sodium_malloc'd */

static int apply_key(sqlite3 *db, char **error, const struct sqlite3_api_routines *routines) {
    (void)error;
    (void)routines;
    sqlite3_vfs *vfs = NULL;
    if (given == NULL || sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || vfs == NULL) return SQLITE_OK;
    if (strcmp(vfs->zName, TRIPBOARD_SEALED_VFS) != 0) return SQLITE_OK;
    tripboard_page_key key = {given, given + 32, 4096};
    int rc = sqlite3_file_control(db, "main", TRIPBOARD_FCNTL_PAGE_KEY, &key);
    int reserve = TRIPBOARD_SEALED_RESERVE;
    if (rc == SQLITE_OK) rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    return rc;
}

int sqlite3_tripboardsealedpages_init(sqlite3 *db, char **error, const void *routines) {
    (void)db;
    (void)routines;
    // SQLite unloads an extension when the connection that loaded it closes (the shell's `.open`
    // closes it): the VFS registered here must outlive it. A second handle that is never closed,
    // RTLD_NODELETE, keeps this library mapped for the life of the process.
    Dl_info self;
    if (dladdr((void *)sqlite3_tripboardsealedpages_init, &self) == 0 || dlopen(self.dli_fname, RTLD_NOW | RTLD_NODELETE) == NULL) {
        if (error != NULL) *error = sqlite3_mprintf("the sealed-page extension could not keep itself loaded");
        return SQLITE_ERROR;
    }
    int rc = tripboard_sealed_register();
    if (rc != SQLITE_OK) return rc;
    const char *named = getenv("TRIPBOARD_PAGE_KEY_FD");
    if (named == NULL || given != NULL) return SQLITE_OK;
    int fd = atoi(named);
    uint8_t *key = sodium_malloc(48);
    if (key == NULL) return SQLITE_NOMEM;
    size_t have = 0;
    while (have < 48) {
        ssize_t got = read(fd, key + have, 48 - have);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        have += (size_t)got;
    }
    close(fd);
    if (have != 48) {
        sodium_free(key);
        if (error != NULL) *error = sqlite3_mprintf("TRIPBOARD_PAGE_KEY_FD did not give a page key");
        return SQLITE_ERROR;
    }
    given = key;
    return sqlite3_auto_extension((void (*)(void))apply_key);
}
