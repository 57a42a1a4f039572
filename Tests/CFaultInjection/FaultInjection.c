#include "FaultInjection.h"
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

static sqlite3_vfs *wrapped;
static sqlite3_vfs faulty;
static atomic_int armedKinds;
static atomic_long target;
static atomic_long seen;
static atomic_long injected;
static atomic_int failCode;
static atomic_int sticky;

typedef struct FaultyFile {
    sqlite3_file base;
    sqlite3_file *real;
} FaultyFile;

/// Counts an operation of `kind`; returns the code to fail it with, or SQLITE_OK.
static int fault(int kind) {
    if (!(atomic_load(&armedKinds) & kind)) return SQLITE_OK;
    long n = atomic_fetch_add(&seen, 1) + 1;
    long k = atomic_load(&target);
    if (k > 0 && (n == k || (n > k && atomic_load(&sticky)))) {
        atomic_fetch_add(&injected, 1);
        return atomic_load(&failCode);
    }
    return SQLITE_OK;
}

#define REAL(f) (((FaultyFile *)(f))->real)

static int fClose(sqlite3_file *f) {
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    return rc;
}
static int fRead(sqlite3_file *f, void *p, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), p, n, o); }
static int fWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 o) {
    int rc = fault(FAULTINJECTION_WRITE);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xWrite(REAL(f), p, n, o);
}
static int fTruncate(sqlite3_file *f, sqlite3_int64 size) {
    int rc = fault(FAULTINJECTION_TRUNCATE);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int fSync(sqlite3_file *f, int flags) {
    int rc = fault(FAULTINJECTION_SYNC);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int fFileSize(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int fLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int fUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int fCheckReservedLock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int fFileControl(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int fSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fShmMap(sqlite3_file *f, int i, int size, int extend, void volatile **p) {
    return REAL(f)->pMethods->xShmMap(REAL(f), i, size, extend, p);
}
static int fShmLock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void fShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fShmUnmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }
static int fFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, p); }
static int fUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods methods1 = {
    1, fClose, fRead, fWrite, fTruncate, fSync, fFileSize, fLock, fUnlock, fCheckReservedLock, fFileControl,
    fSectorSize, fDeviceCharacteristics, 0, 0, 0, 0, 0, 0,
};
static const sqlite3_io_methods methods2 = {
    2, fClose, fRead, fWrite, fTruncate, fSync, fFileSize, fLock, fUnlock, fCheckReservedLock, fFileControl,
    fSectorSize, fDeviceCharacteristics, fShmMap, fShmLock, fShmBarrier, fShmUnmap, 0, 0,
};
static const sqlite3_io_methods methods3 = {
    3, fClose, fRead, fWrite, fTruncate, fSync, fFileSize, fLock, fUnlock, fCheckReservedLock, fFileControl,
    fSectorSize, fDeviceCharacteristics, fShmMap, fShmLock, fShmBarrier, fShmUnmap, fFetch, fUnfetch,
};

static int fOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    FaultyFile *f = (FaultyFile *)file;
    f->real = (sqlite3_file *)&f[1];
    memset(f->real, 0, wrapped->szOsFile);
    int rc = wrapped->xOpen(wrapped, name, f->real, flags, outFlags);
    if (f->real->pMethods == 0) {
        f->base.pMethods = 0;
        return rc;
    }
    int version = f->real->pMethods->iVersion;
    f->base.pMethods = version >= 3 ? &methods3 : version == 2 ? &methods2 : &methods1;
    return rc;
}
static int fDelete(sqlite3_vfs *v, const char *name, int sync) { return wrapped->xDelete(wrapped, name, sync); }
static int fAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { return wrapped->xAccess(wrapped, name, flags, out); }
static int fFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { return wrapped->xFullPathname(wrapped, name, n, out); }
static void *fDlOpen(sqlite3_vfs *v, const char *name) { return wrapped->xDlOpen(wrapped, name); }
static void fDlError(sqlite3_vfs *v, int n, char *out) { wrapped->xDlError(wrapped, n, out); }
static void (*fDlSym(sqlite3_vfs *v, void *h, const char *name))(void) { return wrapped->xDlSym(wrapped, h, name); }
static void fDlClose(sqlite3_vfs *v, void *h) { wrapped->xDlClose(wrapped, h); }
static int fRandomness(sqlite3_vfs *v, int n, char *out) { return wrapped->xRandomness(wrapped, n, out); }
static int fSleep(sqlite3_vfs *v, int us) { return wrapped->xSleep(wrapped, us); }
static int fCurrentTime(sqlite3_vfs *v, double *out) { return wrapped->xCurrentTime(wrapped, out); }
static int fGetLastError(sqlite3_vfs *v, int n, char *out) { return wrapped->xGetLastError ? wrapped->xGetLastError(wrapped, n, out) : 0; }
static int fCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { return wrapped->xCurrentTimeInt64(wrapped, out); }

int faultinjection_install(void) {
    if (wrapped == 0) {
        wrapped = sqlite3_vfs_find(0);
        if (wrapped == 0) return SQLITE_ERROR;
        memset(&faulty, 0, sizeof faulty);
        faulty.iVersion = 2;
        faulty.szOsFile = (int)sizeof(FaultyFile) + wrapped->szOsFile;
        faulty.mxPathname = wrapped->mxPathname;
        faulty.zName = "faultline-fault-injection";
        faulty.xOpen = fOpen;
        faulty.xDelete = fDelete;
        faulty.xAccess = fAccess;
        faulty.xFullPathname = fFullPathname;
        faulty.xDlOpen = fDlOpen;
        faulty.xDlError = fDlError;
        faulty.xDlSym = fDlSym;
        faulty.xDlClose = fDlClose;
        faulty.xRandomness = fRandomness;
        faulty.xSleep = fSleep;
        faulty.xCurrentTime = fCurrentTime;
        faulty.xGetLastError = fGetLastError;
        faulty.xCurrentTimeInt64 = fCurrentTimeInt64;
    }
    return sqlite3_vfs_register(&faulty, 1);
}

void faultinjection_uninstall(void) {
    if (wrapped) sqlite3_vfs_register(wrapped, 1);
}

void faultinjection_arm(int kinds, long k, int code, int stick) {
    atomic_store(&armedKinds, 0);
    atomic_store(&seen, 0);
    atomic_store(&injected, 0);
    atomic_store(&target, k);
    atomic_store(&failCode, code);
    atomic_store(&sticky, stick);
    atomic_store(&armedKinds, kinds);
}

void faultinjection_disarm(void) { atomic_store(&target, 0); }
long faultinjection_count(void) { return atomic_load(&seen); }
long faultinjection_injected(void) { return atomic_load(&injected); }
