// The sealed-page VFS (see include/tripboard_sealed_pages.h and docs/security.md, "Sealed stores").
//
// What passes through it, and how:
// - the main file: every read and write is mapped onto whole pages; a page is opened (checked and
//   decrypted) after it is read and sealed before it is written. A page that does not open is
//   SQLITE_IOERR_DATA, the code SQLite's own checksum VFS gives a page that fails its check.
// - the WAL: its 32-byte header and each frame's 24-byte header pass as they are; each frame's page
//   is sealed as in the main file, bound to the page number in its frame header. A frame read
//   together with its header is SQLite's recovery walking the log: a page there that does not
//   open reads as random bytes, so the frame's checksum fails and SQLite ends the log before it, as
//   it does after a torn write. A page a query reads alone that does not open is
//   SQLITE_IOERR_DATA. A checkpoint copies each frame's sealed page to the main file as it is,
//   unopened: the same bytes are that page there, and one that does not open is found when it is
//   next read.
// - the -shm file: passed through (page numbers and frame numbers, no page content).
// - journals and temporary files: in memory, never on disk (a sealed database runs in WAL mode;
//   a rollback journal is only needed for the instant before WAL is turned on).
// The io_methods are version 2: SQLite maps a file into memory only through version 3's xFetch,
// which would hand it sealed bytes.
#include "tripboard_sealed_pages.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sodium.h>

enum { KEY_BYTES = 32, ID_BYTES = 16, NONCE_BYTES = 24, TAG_BYTES = 16, WAL_HEADER = 32, FRAME_HEADER = 24 };
static const uint8_t domain[8] = {'T', 'B', 'P', 'A', 'G', 'E', '0', '1'};

typedef struct {
    uint8_t key[KEY_BYTES];
    uint8_t file_id[ID_BYTES];
    int page_size;
} page_keys;

enum { KIND_MAIN = 1, KIND_WAL = 2, KIND_MEMORY = 3 };

typedef struct sealed_file sealed_file;
struct sealed_file {
    sqlite3_file base;
    int kind;
    /* KIND_MAIN: its own keys (sodium_malloc'd, NULL until given). KIND_WAL: the main file's. */
    page_keys *keys;
    sealed_file *main;
    uint8_t nonce_prefix[16];
    uint64_t nonce_counter;
    uint8_t *scratch; /* one page */
    int scratch_size;
    /* KIND_MAIN: while its connection holds the checkpoint lock (`checkpointing`), the last WAL
       page it read alone, handed over sealed: its bytes (`copy`), the buffer they went into and
       the page number its frame header names. A checkpoint writes that buffer to the main file
       next, as it is. Other reads keep nothing. */
    int checkpointing;
    uint8_t *copy;
    const uint8_t *copy_into;
    uint32_t copy_page;
    /* The last frame header written (a WAL page is written right after its header). */
    sqlite3_int64 last_frame_offset;
    uint32_t last_frame_page;
    /* KIND_MEMORY */
    uint8_t *memory;
    sqlite3_int64 memory_size, memory_capacity;
    /* KIND_MAIN and KIND_WAL: the unix VFS's file, right after this struct. */
    sqlite3_file *real;
};

static sqlite3_vfs *lower;

// MARK: - A key waiting for a path (VACUUM INTO's output)

static pthread_mutex_t expected_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *expected_path;
static page_keys *expected_keys;

int tripboard_sealed_expect(const char *path, const tripboard_page_key *key) {
    pthread_mutex_lock(&expected_mutex);
    if (expected_path != NULL) {
        pthread_mutex_unlock(&expected_mutex);
        return SQLITE_BUSY;
    }
    expected_keys = sodium_malloc(sizeof(page_keys));
    expected_path = expected_keys ? strdup(path) : NULL;
    if (expected_path == NULL) {
        if (expected_keys) sodium_free(expected_keys);
        expected_keys = NULL;
        pthread_mutex_unlock(&expected_mutex);
        return SQLITE_NOMEM;
    }
    memcpy(expected_keys->key, key->key, KEY_BYTES);
    memcpy(expected_keys->file_id, key->file_id, ID_BYTES);
    expected_keys->page_size = key->page_size;
    pthread_mutex_unlock(&expected_mutex);
    return SQLITE_OK;
}

void tripboard_sealed_forget(void) {
    pthread_mutex_lock(&expected_mutex);
    free(expected_path);
    expected_path = NULL;
    if (expected_keys) sodium_free(expected_keys);
    expected_keys = NULL;
    pthread_mutex_unlock(&expected_mutex);
}

/// A copy of the keys waiting for `path`, or NULL.
static page_keys *expected_for(const char *path) {
    page_keys *copy = NULL;
    pthread_mutex_lock(&expected_mutex);
    if (expected_path != NULL && path != NULL && strcmp(expected_path, path) == 0) {
        copy = sodium_malloc(sizeof(page_keys));
        if (copy) memcpy(copy, expected_keys, sizeof(page_keys));
    }
    pthread_mutex_unlock(&expected_mutex);
    return copy;
}

// MARK: - The page format

static void associated_data(uint8_t out[8 + ID_BYTES + 4], const uint8_t file_id[ID_BYTES], uint32_t page_number) {
    memcpy(out, domain, 8);
    memcpy(out + 8, file_id, ID_BYTES);
    out[24] = (uint8_t)(page_number >> 24);
    out[25] = (uint8_t)(page_number >> 16);
    out[26] = (uint8_t)(page_number >> 8);
    out[27] = (uint8_t)page_number;
}

void tripboard_seal_page(const uint8_t key[32], const uint8_t file_id[16], uint32_t page_number,
                         uint8_t *page, int page_size, const uint8_t nonce[24]) {
    uint8_t ad[28];
    associated_data(ad, file_id, page_number);
    int body = page_size - TRIPBOARD_SEALED_RESERVE;
    memcpy(page + body, nonce, NONCE_BYTES);
    unsigned long long tag_length = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(page, page + body + NONCE_BYTES, &tag_length, page, (unsigned long long)body,
                                                        ad, sizeof ad, NULL, page + body, key);
}

int tripboard_open_page(const uint8_t key[32], const uint8_t file_id[16], uint32_t page_number, uint8_t *page, int page_size) {
    uint8_t ad[28];
    associated_data(ad, file_id, page_number);
    int body = page_size - TRIPBOARD_SEALED_RESERVE;
    // libsodium checks the tag before it decrypts, and zeroes the output when it fails.
    if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(page, NULL, page, (unsigned long long)body, page + body + NONCE_BYTES,
                                                            ad, sizeof ad, page + body, key) != 0) {
        return -1;
    }
    memset(page + body, 0, TRIPBOARD_SEALED_RESERVE);
    return 0;
}

static int is_zero(const uint8_t *bytes, int count) {
    uint8_t any = 0;
    for (int index = 0; index < count; index++) any |= bytes[index];
    return any == 0;
}

static int scratch(sealed_file *file, int size) {
    if (file->scratch_size >= size) return SQLITE_OK;
    uint8_t *grown = sqlite3_realloc(file->scratch, size);
    if (grown == NULL) return SQLITE_NOMEM;
    file->scratch = grown;
    file->scratch_size = size;
    return SQLITE_OK;
}

static void next_nonce(sealed_file *file, uint8_t nonce[NONCE_BYTES]) {
    // 16 random bytes per open file and a counter: unique without a system call per page.
    sealed_file *owner = file->kind == KIND_WAL ? file->main : file;
    memcpy(nonce, owner->nonce_prefix, 16);
    uint64_t counter = ++owner->nonce_counter;
    memcpy(nonce + 16, &counter, 8);
}

/// Seals `plaintext` (one page) for `page_number` and writes it at `offset`.
static int write_sealed(sealed_file *file, const uint8_t *plaintext, uint32_t page_number, sqlite3_int64 offset) {
    const page_keys *keys = file->keys;
    int size = keys->page_size;
    if (page_number == 1) {
        // Page 1's header must keep room for the seal: the reserve set before the file was made,
        // and the page size the key was given with.
        int stated = (plaintext[16] << 8) | plaintext[17];
        if (stated == 1) stated = 65536;
        if (plaintext[20] != TRIPBOARD_SEALED_RESERVE || stated != size) return SQLITE_IOERR_WRITE;
    }
    int rc = scratch(file, size);
    if (rc != SQLITE_OK) return rc;
    memcpy(file->scratch, plaintext, (size_t)(size - TRIPBOARD_SEALED_RESERVE));
    uint8_t nonce[NONCE_BYTES];
    next_nonce(file, nonce);
    tripboard_seal_page(keys->key, keys->file_id, page_number, file->scratch, size, nonce);
    return file->real->pMethods->xWrite(file->real, file->scratch, size, offset);
}

/// Reads the sealed page at `offset` into `page` and opens it. SQLITE_IOERR_SHORT_READ (zeros)
/// past the end of the file; SQLITE_IOERR_DATA when it does not open, or `*failed` set instead
/// when `failed` is given.
static int read_opened(sealed_file *file, uint8_t *page, uint32_t page_number, sqlite3_int64 offset, int *failed) {
    const page_keys *keys = file->keys;
    int size = keys->page_size;
    int rc = file->real->pMethods->xRead(file->real, page, size, offset);
    if (rc == SQLITE_IOERR_SHORT_READ && is_zero(page, size)) return rc;
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
    if (rc == SQLITE_OK && tripboard_open_page(keys->key, keys->file_id, page_number, page, size) == 0) return SQLITE_OK;
    if (failed == NULL) return SQLITE_IOERR_DATA;
    *failed = 1;
    return SQLITE_OK;
}

// MARK: - The main file

static int main_read(sealed_file *file, uint8_t *out, int amount, sqlite3_int64 offset) {
    if (file->keys == NULL) {
        // sqlite3_open_v2 reads the 100-byte header before the key can be given: it reads as no
        // header (SQLite reads page 1 again, through the key, before it believes anything).
        if (offset != 0 || amount > 100) return SQLITE_IOERR_DATA;
        memset(out, 0, (size_t)amount);
        return SQLITE_IOERR_SHORT_READ;
    }
    int size = file->keys->page_size;
    int short_read = 0;
    while (amount > 0) {
        sqlite3_int64 index = offset / size;
        int within = (int)(offset % size);
        int take = size - within < amount ? size - within : amount;
        int whole = within == 0 && take == size;
        int rc = whole ? SQLITE_OK : scratch(file, size);
        if (rc != SQLITE_OK) return rc;
        uint8_t *page = whole ? out : file->scratch;
        rc = read_opened(file, page, (uint32_t)(index + 1), index * size, NULL);
        if (rc == SQLITE_IOERR_SHORT_READ) short_read = 1;
        else if (rc != SQLITE_OK) return rc;
        if (!whole) memcpy(out, page + within, (size_t)take);
        out += take;
        offset += take;
        amount -= take;
    }
    return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

// The crash point `store.checkpoint-page-written` (TRIPBOARD_CRASH_AT, as the Swift side's
// `CrashPoint`; docs/cli.md): the process is killed right after it writes a whole page of a sealed
// database's main file. A store in WAL mode writes its main file only when a checkpoint copies
// frames back, so that is a kill mid-checkpoint, which no Swift code can reach (SQLite checkpoints
// on its own, at a commit or as the last connection closes).
static void reach_checkpoint_page_written(void) {
    static _Atomic int selected = -1;
    int value = selected;
    if (value < 0) {
        const char *name = getenv("TRIPBOARD_CRASH_AT");
        value = name != NULL && strcmp(name, "store.checkpoint-page-written") == 0;
        selected = value;
    }
    if (value) kill(getpid(), SIGKILL);
}

/// A checkpoint's write of the WAL page its connection just read alone (`read_page_alone`), which
/// is still sealed: written as it is when it is unchanged and goes to the page its frame was
/// sealed for. Anything else — a WAL index that maps the frame to another page than its header
/// names — is damage, refused.
static int write_checkpoint_copy(sealed_file *file, const uint8_t *in, uint32_t page_number, sqlite3_int64 offset) {
    int size = file->keys->page_size;
    int same = file->copy_page == page_number && memcmp(in, file->copy, (size_t)size) == 0;
    file->copy_into = NULL;
    if (!same) return SQLITE_IOERR_DATA;
    return file->real->pMethods->xWrite(file->real, in, size, offset);
}

static int main_write(sealed_file *file, const uint8_t *in, int amount, sqlite3_int64 offset) {
    if (file->keys == NULL) return SQLITE_IOERR_WRITE;
    int size = file->keys->page_size;
    while (amount > 0) {
        sqlite3_int64 index = offset / size;
        int within = (int)(offset % size);
        int take = size - within < amount ? size - within : amount;
        int rc;
        if (within == 0 && take == size) {
            if (file->copy_into != NULL && file->copy_into == in) {
                rc = write_checkpoint_copy(file, in, (uint32_t)(index + 1), index * size);
            } else {
                rc = write_sealed(file, in, (uint32_t)(index + 1), index * size);
            }
            if (rc == SQLITE_OK) reach_checkpoint_page_written();
        } else {
            // A part of a page: the page as it is, changed, sealed again.
            uint8_t *page = sqlite3_malloc(size);
            if (page == NULL) return SQLITE_NOMEM;
            rc = read_opened(file, page, (uint32_t)(index + 1), index * size, NULL);
            if (rc == SQLITE_IOERR_SHORT_READ) rc = SQLITE_OK;
            if (rc == SQLITE_OK) {
                memcpy(page + within, in, (size_t)take);
                rc = write_sealed(file, page, (uint32_t)(index + 1), index * size);
            }
            sqlite3_free(page);
        }
        if (rc != SQLITE_OK) return rc;
        in += take;
        offset += take;
        amount -= take;
    }
    return SQLITE_OK;
}

// MARK: - The WAL

static uint32_t big_endian(const uint8_t *bytes) {
    return ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) | ((uint32_t)bytes[2] << 8) | bytes[3];
}

/// A WAL page read alone and whole into `page` (a query's read, or a checkpoint's): the frame's
/// header and page in one read, the page opened for the number its header names. While the
/// connection checkpoints, the page is handed over sealed instead: the checkpoint writes it to
/// the main file next (`write_checkpoint_copy`), where the same bytes open for the same page
/// number, and SQLite reads nothing of it in between. A frame that does not open is found when
/// its page is next read, from the main file. SQLITE_IOERR_SHORT_READ (zeros) past the end.
static int read_page_alone(sealed_file *file, uint8_t *page, sqlite3_int64 start) {
    sealed_file *owner = file->main;
    int size = file->keys->page_size;
    owner->copy_into = NULL;
    int rc = scratch(file, FRAME_HEADER + size);
    if (rc != SQLITE_OK) return rc;
    rc = file->real->pMethods->xRead(file->real, file->scratch, FRAME_HEADER + size, start);
    if (rc == SQLITE_IOERR_SHORT_READ && is_zero(file->scratch + FRAME_HEADER, size)) {
        memset(page, 0, (size_t)size);
        return rc;
    }
    if (rc == SQLITE_IOERR_SHORT_READ) return SQLITE_IOERR_DATA;
    if (rc != SQLITE_OK) return rc;
    uint32_t number = big_endian(file->scratch);
    memcpy(page, file->scratch + FRAME_HEADER, (size_t)size);
    // Opened, unless the connection checkpoints and there is memory to keep the sealed bytes.
    if (!owner->checkpointing || (owner->copy == NULL && (owner->copy = sqlite3_malloc(size)) == NULL)) {
        return tripboard_open_page(file->keys->key, file->keys->file_id, number, page, size) == 0 ? SQLITE_OK : SQLITE_IOERR_DATA;
    }
    memcpy(owner->copy, page, (size_t)size);
    owner->copy_into = page;
    owner->copy_page = number;
    return SQLITE_OK;
}

static int wal_read(sealed_file *file, uint8_t *out, int amount, sqlite3_int64 offset) {
    if (file->keys == NULL) return SQLITE_IOERR_DATA;
    int size = file->keys->page_size;
    sqlite3_int64 frame = FRAME_HEADER + size;
    // SQLite's recovery reads a frame and its header in one call; its other reads take one part.
    int recovering = offset >= WAL_HEADER && (offset - WAL_HEADER) % frame == 0 && amount == frame;
    int short_read = 0;
    const uint8_t *header_read = NULL;
    while (amount > 0) {
        int take, rc;
        if (offset < WAL_HEADER) {
            take = WAL_HEADER - (int)offset < amount ? WAL_HEADER - (int)offset : amount;
            rc = file->real->pMethods->xRead(file->real, out, take, offset);
        } else {
            sqlite3_int64 start = WAL_HEADER + (offset - WAL_HEADER) / frame * frame;
            int within = (int)(offset - start);
            if (within < FRAME_HEADER) {
                take = FRAME_HEADER - within < amount ? FRAME_HEADER - within : amount;
                rc = file->real->pMethods->xRead(file->real, out, take, offset);
                if (within == 0 && take == FRAME_HEADER) header_read = out;
            } else {
                int in_page = within - FRAME_HEADER;
                take = size - in_page < amount ? size - in_page : amount;
                if (in_page == 0 && take == size && header_read == NULL && !recovering) {
                    rc = read_page_alone(file, out, start);
                } else {
                    uint8_t number[4];
                    if (header_read != NULL) {
                        memcpy(number, header_read, 4);
                        rc = SQLITE_OK;
                    } else {
                        rc = file->real->pMethods->xRead(file->real, number, 4, start);
                    }
                    if (rc == SQLITE_IOERR_SHORT_READ) {
                        memset(out, 0, (size_t)take);
                    } else if (rc == SQLITE_OK) {
                        int whole = in_page == 0 && take == size;
                        rc = whole ? SQLITE_OK : scratch(file, size);
                        if (rc != SQLITE_OK) return rc;
                        uint8_t *page = whole ? out : file->scratch;
                        int failed = 0;
                        rc = read_opened(file, page, big_endian(number), start + FRAME_HEADER, recovering ? &failed : NULL);
                        if (failed) randombytes_buf(page, (size_t)size);
                        if (!whole && rc != SQLITE_IOERR_SHORT_READ) memcpy(out, page + in_page, (size_t)take);
                        if (!whole && rc == SQLITE_IOERR_SHORT_READ) memset(out, 0, (size_t)take);
                    }
                }
                header_read = NULL;
            }
        }
        if (rc == SQLITE_IOERR_SHORT_READ) short_read = 1;
        else if (rc != SQLITE_OK) return rc;
        out += take;
        offset += take;
        amount -= take;
    }
    return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int wal_write(sealed_file *file, const uint8_t *in, int amount, sqlite3_int64 offset) {
    if (file->keys == NULL) return SQLITE_IOERR_WRITE;
    int size = file->keys->page_size;
    sqlite3_int64 frame = FRAME_HEADER + size;
    while (amount > 0) {
        int take, rc;
        if (offset < WAL_HEADER) {
            take = WAL_HEADER - (int)offset < amount ? WAL_HEADER - (int)offset : amount;
            rc = file->real->pMethods->xWrite(file->real, in, take, offset);
        } else {
            sqlite3_int64 start = WAL_HEADER + (offset - WAL_HEADER) / frame * frame;
            int within = (int)(offset - start);
            if (within < FRAME_HEADER) {
                take = FRAME_HEADER - within < amount ? FRAME_HEADER - within : amount;
                if (within != 0 || take != FRAME_HEADER) return SQLITE_IOERR_WRITE;
                file->last_frame_offset = start;
                file->last_frame_page = big_endian(in);
                rc = file->real->pMethods->xWrite(file->real, in, take, offset);
            } else {
                // SQLite writes a frame's page whole (the VFS says writes are powersafe, so it
                // never splits one at a sector): right after its header, or alone when a page is
                // changed again in the transaction that wrote its frame (the frame is rewritten
                // in place, its header's checksums after): its number is then the header's on disk.
                take = size;
                if (within != FRAME_HEADER || amount < size) return SQLITE_IOERR_WRITE;
                if (file->last_frame_offset != start) {
                    uint8_t number[4];
                    rc = file->real->pMethods->xRead(file->real, number, 4, start);
                    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_WRITE : rc;
                    file->last_frame_offset = start;
                    file->last_frame_page = big_endian(number);
                }
                rc = write_sealed(file, in, file->last_frame_page, offset);
            }
        }
        if (rc != SQLITE_OK) return rc;
        in += take;
        offset += take;
        amount -= take;
    }
    return SQLITE_OK;
}

// MARK: - io_methods over the unix VFS

static int sealed_close(sqlite3_file *base) {
    sealed_file *file = (sealed_file *)base;
    int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    if (file->kind == KIND_MAIN && file->keys != NULL) sodium_free(file->keys);
    file->keys = NULL;
    sqlite3_free(file->scratch);
    file->scratch = NULL;
    sqlite3_free(file->copy);
    file->copy = NULL;
    file->copy_into = NULL;
    return rc;
}

static int sealed_read(sqlite3_file *base, void *out, int amount, sqlite3_int64 offset) {
    sealed_file *file = (sealed_file *)base;
    return file->kind == KIND_MAIN ? main_read(file, out, amount, offset) : wal_read(file, out, amount, offset);
}

static int sealed_write(sqlite3_file *base, const void *in, int amount, sqlite3_int64 offset) {
    sealed_file *file = (sealed_file *)base;
    return file->kind == KIND_MAIN ? main_write(file, in, amount, offset) : wal_write(file, in, amount, offset);
}

#define REAL(base) (((sealed_file *)(base))->real)
static int sealed_truncate(sqlite3_file *base, sqlite3_int64 size) { return REAL(base)->pMethods->xTruncate(REAL(base), size); }
static int sealed_sync(sqlite3_file *base, int flags) { return REAL(base)->pMethods->xSync(REAL(base), flags); }
static int sealed_file_size(sqlite3_file *base, sqlite3_int64 *size) { return REAL(base)->pMethods->xFileSize(REAL(base), size); }
static int sealed_lock(sqlite3_file *base, int level) { return REAL(base)->pMethods->xLock(REAL(base), level); }
static int sealed_unlock(sqlite3_file *base, int level) { return REAL(base)->pMethods->xUnlock(REAL(base), level); }
static int sealed_check_reserved(sqlite3_file *base, int *out) { return REAL(base)->pMethods->xCheckReservedLock(REAL(base), out); }
static int sealed_sector_size(sqlite3_file *base) { return REAL(base)->pMethods->xSectorSize(REAL(base)); }
static int sealed_device(sqlite3_file *base) {
    return REAL(base)->pMethods->xDeviceCharacteristics(REAL(base)) | SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}
static int sealed_shm_map(sqlite3_file *base, int region, int size, int extend, void volatile **out) {
    return REAL(base)->pMethods->xShmMap(REAL(base), region, size, extend, out);
}
/// SQLite's checkpoint lock: slot 1 of the -shm's locks (`WAL_CKPT_LOCK` in wal.c).
enum { CHECKPOINT_LOCK = 1 };

static int sealed_shm_lock(sqlite3_file *base, int offset, int count, int flags) {
    int rc = REAL(base)->pMethods->xShmLock(REAL(base), offset, count, flags);
    sealed_file *file = (sealed_file *)base;
    if (offset <= CHECKPOINT_LOCK && CHECKPOINT_LOCK < offset + count) {
        // Held exclusively, the connection is checkpointing (or recovering, whose reads of a
        // frame with its header are opened as always): a page it reads alone is handed over
        // sealed (`read_page_alone`). Released, it is not, whatever the unlock returned (SQLite
        // does not look): a query's page must never be handed over sealed.
        if (flags & SQLITE_SHM_UNLOCK) {
            file->checkpointing = 0;
        } else if (rc == SQLITE_OK) {
            file->checkpointing = (flags & SQLITE_SHM_EXCLUSIVE) != 0;
        }
        if (!file->checkpointing) file->copy_into = NULL;
    }
    return rc;
}
static void sealed_shm_barrier(sqlite3_file *base) { REAL(base)->pMethods->xShmBarrier(REAL(base)); }
static int sealed_shm_unmap(sqlite3_file *base, int delete_flag) { return REAL(base)->pMethods->xShmUnmap(REAL(base), delete_flag); }

static int sealed_file_control(sqlite3_file *base, int op, void *argument) {
    sealed_file *file = (sealed_file *)base;
    if (op == TRIPBOARD_FCNTL_PAGE_KEY) {
        const tripboard_page_key *given = argument;
        int size = given->page_size;
        if (file->kind != KIND_MAIN || size < 512 || size > 65536 || (size & (size - 1)) != 0) return SQLITE_MISUSE;
        if (file->keys == NULL) {
            file->keys = sodium_malloc(sizeof(page_keys));
            if (file->keys == NULL) return SQLITE_NOMEM;
        }
        memcpy(file->keys->key, given->key, KEY_BYTES);
        memcpy(file->keys->file_id, given->file_id, ID_BYTES);
        file->keys->page_size = size;
        // A page kept under the keys before is no copy of anything under these (nor its size).
        sqlite3_free(file->copy);
        file->copy = NULL;
        file->copy_into = NULL;
        return SQLITE_OK;
    }
    if (op == SQLITE_FCNTL_MMAP_SIZE) {
        // No memory-mapped reads: they would bypass the seal.
        *(sqlite3_int64 *)argument = 0;
        return SQLITE_OK;
    }
    int rc = file->real->pMethods->xFileControl(file->real, op, argument);
    if (op == SQLITE_FCNTL_VFSNAME && rc == SQLITE_OK) {
        *(char **)argument = sqlite3_mprintf("%s/%z", TRIPBOARD_SEALED_VFS, *(char **)argument);
    }
    return rc;
}

static const sqlite3_io_methods sealed_methods = {
    2, sealed_close, sealed_read, sealed_write, sealed_truncate, sealed_sync, sealed_file_size, sealed_lock, sealed_unlock,
    sealed_check_reserved, sealed_file_control, sealed_sector_size, sealed_device, sealed_shm_map, sealed_shm_lock,
    sealed_shm_barrier, sealed_shm_unmap, NULL, NULL,
};

// MARK: - Files in memory (journals, temporary files)

static int memory_close(sqlite3_file *base) {
    sealed_file *file = (sealed_file *)base;
    if (file->memory != NULL) sodium_memzero(file->memory, (size_t)file->memory_capacity);
    sqlite3_free(file->memory);
    file->memory = NULL;
    return SQLITE_OK;
}

static int memory_read(sqlite3_file *base, void *out, int amount, sqlite3_int64 offset) {
    sealed_file *file = (sealed_file *)base;
    sqlite3_int64 available = file->memory_size > offset ? file->memory_size - offset : 0;
    if (available >= amount) {
        memcpy(out, file->memory + offset, (size_t)amount);
        return SQLITE_OK;
    }
    if (available > 0) memcpy(out, file->memory + offset, (size_t)available);
    memset((uint8_t *)out + available, 0, (size_t)(amount - available));
    return SQLITE_IOERR_SHORT_READ;
}

static int memory_reserve(sealed_file *file, sqlite3_int64 size) {
    if (size <= file->memory_capacity) return SQLITE_OK;
    sqlite3_int64 capacity = file->memory_capacity ? file->memory_capacity : 65536;
    while (capacity < size) capacity *= 2;
    uint8_t *grown = sqlite3_malloc64((sqlite3_uint64)capacity);
    if (grown == NULL) return SQLITE_IOERR_NOMEM;
    if (file->memory != NULL) {
        memcpy(grown, file->memory, (size_t)file->memory_size);
        sodium_memzero(file->memory, (size_t)file->memory_capacity);
        sqlite3_free(file->memory);
    }
    file->memory = grown;
    file->memory_capacity = capacity;
    return SQLITE_OK;
}

static int memory_write(sqlite3_file *base, const void *in, int amount, sqlite3_int64 offset) {
    sealed_file *file = (sealed_file *)base;
    int rc = memory_reserve(file, offset + amount);
    if (rc != SQLITE_OK) return rc;
    if (offset > file->memory_size) memset(file->memory + file->memory_size, 0, (size_t)(offset - file->memory_size));
    memcpy(file->memory + offset, in, (size_t)amount);
    if (offset + amount > file->memory_size) file->memory_size = offset + amount;
    return SQLITE_OK;
}

static int memory_truncate(sqlite3_file *base, sqlite3_int64 size) {
    sealed_file *file = (sealed_file *)base;
    if (size < file->memory_size) file->memory_size = size;
    return SQLITE_OK;
}

static int memory_sync(sqlite3_file *base, int flags) { (void)base; (void)flags; return SQLITE_OK; }
static int memory_file_size(sqlite3_file *base, sqlite3_int64 *size) { *size = ((sealed_file *)base)->memory_size; return SQLITE_OK; }
static int memory_lock(sqlite3_file *base, int level) { (void)base; (void)level; return SQLITE_OK; }
static int memory_check_reserved(sqlite3_file *base, int *out) { (void)base; *out = 0; return SQLITE_OK; }
static int memory_file_control(sqlite3_file *base, int op, void *argument) { (void)base; (void)op; (void)argument; return SQLITE_NOTFOUND; }
static int memory_sector_size(sqlite3_file *base) { (void)base; return 4096; }
static int memory_device(sqlite3_file *base) { (void)base; return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

static const sqlite3_io_methods memory_methods = {
    1, memory_close, memory_read, memory_write, memory_truncate, memory_sync, memory_file_size, memory_lock, memory_lock,
    memory_check_reserved, memory_file_control, memory_sector_size, memory_device, NULL, NULL, NULL, NULL, NULL, NULL,
};

// MARK: - The VFS

static int sealed_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *base, int flags, int *out_flags) {
    (void)vfs;
    sealed_file *file = (sealed_file *)base;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)&file[1];
    if (!(flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL))) {
        file->kind = KIND_MEMORY;
        file->base.pMethods = &memory_methods;
        if (out_flags != NULL) *out_flags = flags;
        return SQLITE_OK;
    }
    int rc = lower->xOpen(lower, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK) return rc;
    if (flags & SQLITE_OPEN_WAL) {
        sqlite3_file *owner = sqlite3_database_file_object(name);
        if (owner == NULL || owner->pMethods != &sealed_methods) {
            file->real->pMethods->xClose(file->real);
            return SQLITE_CANTOPEN;
        }
        file->kind = KIND_WAL;
        file->main = (sealed_file *)owner;
        file->keys = file->main->keys;
    } else {
        file->kind = KIND_MAIN;
        file->keys = expected_for(name);
        randombytes_buf(file->nonce_prefix, sizeof file->nonce_prefix);
    }
    file->last_frame_offset = -1;
    file->base.pMethods = &sealed_methods;
    return SQLITE_OK;
}

static int sealed_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    // A journal kept in memory has no file to delete.
    int rc = lower->xDelete(lower, name, sync_dir);
    return rc == SQLITE_IOERR_DELETE_NOENT ? SQLITE_OK : rc;
}
static int sealed_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) { (void)vfs; return lower->xAccess(lower, name, flags, out); }
static int sealed_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return lower->xFullPathname(lower, name, size, out);
}
static void *sealed_dl_open(sqlite3_vfs *vfs, const char *name) { (void)vfs; return lower->xDlOpen(lower, name); }
static void sealed_dl_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; lower->xDlError(lower, size, out); }
static void (*sealed_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) { (void)vfs; return lower->xDlSym(lower, handle, symbol); }
static void sealed_dl_close(sqlite3_vfs *vfs, void *handle) { (void)vfs; lower->xDlClose(lower, handle); }
static int sealed_randomness(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return lower->xRandomness(lower, size, out); }
static int sealed_sleep(sqlite3_vfs *vfs, int microseconds) { (void)vfs; return lower->xSleep(lower, microseconds); }
static int sealed_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return lower->xCurrentTime(lower, out); }
static int sealed_last_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return lower->xGetLastError(lower, size, out); }
static int sealed_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out) { (void)vfs; return lower->xCurrentTimeInt64(lower, out); }

static sqlite3_vfs sealed_vfs = {
    2, 0, 1024, NULL, TRIPBOARD_SEALED_VFS, NULL, sealed_open, sealed_delete, sealed_access, sealed_full_pathname, sealed_dl_open,
    sealed_dl_error, sealed_dl_sym, sealed_dl_close, sealed_randomness, sealed_sleep, sealed_current_time, sealed_last_error,
    sealed_current_time64, NULL, NULL, NULL,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered = SQLITE_ERROR;

static void register_once(void) {
    if (sodium_init() < 0) return;
    lower = sqlite3_vfs_find(NULL);
    if (lower == NULL || lower->iVersion < 2) return;
    sealed_vfs.szOsFile = (int)sizeof(sealed_file) + lower->szOsFile;
    sealed_vfs.mxPathname = lower->mxPathname;
    registered = sqlite3_vfs_register(&sealed_vfs, 0);
}

int tripboard_sealed_register(void) {
    pthread_once(&once, register_once);
    return registered;
}
