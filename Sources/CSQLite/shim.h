#ifndef TRIPBOARD_CSQLITE_SHIM_H
#define TRIPBOARD_CSQLITE_SHIM_H
#include <sqlite3.h>

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
#endif
