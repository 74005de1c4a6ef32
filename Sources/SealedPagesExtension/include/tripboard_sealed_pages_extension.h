#ifndef TRIPBOARD_SEALED_PAGES_EXTENSION_H
#define TRIPBOARD_SEALED_PAGES_EXTENSION_H
#include <sqlite3.h>
/// The entry point the sqlite3 shell's `.load` calls (docs/security.md, "Reading a sealed store").
int sqlite3_tripboardsealedpages_init(sqlite3 *db, char **error, const void *routines);
#endif
