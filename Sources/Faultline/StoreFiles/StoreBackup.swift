import CSQLite
import Foundation

/// SQLite's online backup: copies the database a connection reads — its write-ahead log included, one committed
/// state of it — into a file, in one write transaction on the destination, so that a failure part way leaves the
/// destination as it was (https://sqlite.org/backup.html).
enum StoreBackup {
    /// Copies what `source` reads into `destination` (a connection on the destination file).
    static func copy(from source: SQLiteConnection, to destination: SQLiteConnection) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
            throw SQLiteError(connection: destination.handle, code: sqlite3_errcode(destination.handle))
        }
        // All pages in one step: one transaction on the destination. A lock held elsewhere is waited for by the
        // destination's busy timeout, then is an error.
        let rc = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        if rc != SQLITE_DONE { throw SQLiteError(connection: destination.handle, code: rc) }
        if finished != SQLITE_OK { throw SQLiteError(connection: destination.handle, code: finished) }
    }
}
