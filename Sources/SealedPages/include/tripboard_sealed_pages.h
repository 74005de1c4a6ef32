#ifndef TRIPBOARD_SEALED_PAGES_H
#define TRIPBOARD_SEALED_PAGES_H
// Sealed pages: a SQLite VFS, "tripboard-sealed", over the default unix VFS, that seals every
// page of a database's main file and of its WAL with XChaCha20-Poly1305 (libsodium). The format
// is specified byte by byte in docs/security.md ("Sealed stores"):
//
//     page (P bytes) = ciphertext (P - 40)  nonce (24)  tag (16)
//     associated data = "TBPAGE01" (8)  file id (16)  page number (4, big-endian)
//
// The nonce and the tag live in the page's reserved bytes (SQLITE_FCNTL_RESERVE_BYTES = 40), so a
// sealed page is a page in the WAL and in the main file alike. Journals and temporary files
// opened through the VFS are kept in memory; the -shm file passes through (it holds no page).
#include <stdint.h>
#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The VFS's name, for sqlite3_open_v2.
#define TRIPBOARD_SEALED_VFS "tripboard-sealed"
/// The reserved bytes at the end of every sealed page: a nonce and a tag.
#define TRIPBOARD_SEALED_RESERVE 40
/// The file-control operation that gives a connection's main file its key
/// (`sqlite3_file_control(db, "main", TRIPBOARD_FCNTL_PAGE_KEY, &key)`), before its first read.
#define TRIPBOARD_FCNTL_PAGE_KEY 0x54425031
/// What TRIPBOARD_FCNTL_PAGE_KEY takes: the bytes are copied into guarded memory.
typedef struct {
    const uint8_t *key;      /* 32 bytes */
    const uint8_t *file_id;  /* 16 bytes */
    int page_size;           /* 512 … 65536, a power of two */
} tripboard_page_key;

/// Gives `key` to the main database file at `path` (its full path, as SQLite names it) when it
/// is next opened through the VFS: for a file SQLite opens itself, where no file control can
/// reach it first (the output of `VACUUM INTO`). One path at a time per process is enough:
/// SQLITE_OK, or SQLITE_BUSY when another path waits. `tripboard_sealed_forget` ends the wait.
int tripboard_sealed_expect(const char *path, const tripboard_page_key *key);
void tripboard_sealed_forget(void);

/// Registers the VFS (once; later calls return the first result). SQLITE_OK or an error code.
int tripboard_sealed_register(void);

/// Seals one plaintext page in place (its last 40 bytes are overwritten with `nonce` and the tag).
void tripboard_seal_page(const uint8_t key[32], const uint8_t file_id[16], uint32_t page_number,
                         uint8_t *page, int page_size, const uint8_t nonce[24]);
/// Opens one sealed page in place; its last 40 bytes become zeros. 0, or -1 when it does not
/// authenticate (its first P - 40 bytes are then zeros: libsodium clears what it would not give).
int tripboard_open_page(const uint8_t key[32], const uint8_t file_id[16], uint32_t page_number,
                        uint8_t *page, int page_size);

#ifdef __cplusplus
}
#endif
#endif
