#ifndef FAULT_INJECTION_H
#define FAULT_INJECTION_H

/// An SQLite VFS wrapping the default one that fails the k-th write, sync or truncate (tests only: issues 51, 52).
///
/// `faultinjection_install()` makes it the default VFS of the process (every connection opened afterwards uses it);
/// `faultinjection_uninstall()` makes the wrapped VFS the default again. Install it once; arm it per run.

/// Operations that count towards the k-th (a mask).
enum {
    FAULTINJECTION_WRITE = 1,
    FAULTINJECTION_SYNC = 2,
    FAULTINJECTION_TRUNCATE = 4,
};

/// Installs the VFS as the default (idempotent). Returns an SQLite result code.
int faultinjection_install(void);
/// Makes the wrapped VFS the default again.
void faultinjection_uninstall(void);
/// Fails the `k`-th (1-based) operation in `kinds` from now with `code` (an SQLite result code such as
/// SQLITE_IOERR_WRITE or SQLITE_FULL), and every one after it while `sticky` is non-zero (a full disk stays full).
/// `k` = 0 injects nothing and only counts.
void faultinjection_arm(int kinds, long k, int code, int sticky);
/// Stops injecting (counting goes on).
void faultinjection_disarm(void);
/// Operations in the armed kinds seen since the last `faultinjection_arm`.
long faultinjection_count(void);
/// Faults injected since the last `faultinjection_arm`.
long faultinjection_injected(void);

#endif
