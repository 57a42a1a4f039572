#include <sqlite3.h>

/// `sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, 0)`: variadic C functions are not callable from Swift.
static inline int faultline_sqlite3_reset_database(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, (int *)0);
}
