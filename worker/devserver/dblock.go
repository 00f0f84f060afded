package devserver

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrDBInUse is wrapped by Start's error when another process runs a server on
// Options.DBFile: two servers on one SQLite file would corrupt it.
var ErrDBInUse = errors.New("database in use")

// sqliteDMSByte is the byte of a WAL database's -shm file that SQLite read-locks for as
// long as a connection is open (its "dead man switch": 120, plus the 8 WAL-index locks).
const sqliteDMSByte = 128

// lockDB claims the SQLite file db for one server until unlock is called: an flock on
// db+".lock", which every todoflow process holds while its server runs on db; and, for
// servers todoflow did not start, SQLite's own lock on the -shm file in WAL mode.
func lockDB(db string) (unlock func(), err error) {
	unlock, err = tryLock(db + ".lock")
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("%w: %s is used by another todoflow server (a `worker --dev` or a `starter run`)", ErrDBInUse, db)
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s.lock: %w", db, err)
	}
	if pid, err := sqliteHolder(db); err != nil || pid != 0 {
		unlock()
		if err != nil {
			return nil, fmt.Errorf("checking whether %s is in use: %w", db, err)
		}
		return nil, fmt.Errorf("%w: %s is open in another process (pid %d)", ErrDBInUse, db, pid)
	}
	return unlock, nil
}

// tryLock takes an exclusive flock on path without waiting (syscall.EWOULDBLOCK when it
// is held). The kernel drops it when its holder dies, so a crash leaves no stale lock.
func tryLock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing the file releases the lock
}

// sqliteHolder returns the pid of a process that has the WAL database db open, or 0.
// F_GETLK only asks: it takes no lock, so closing the file cannot drop one of ours.
func sqliteHolder(db string) (int, error) {
	f, err := os.Open(db + "-shm")
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // never opened in WAL mode, or cleaned up after the last close
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: sqliteDMSByte, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0, err
	}
	return int(lk.Pid), nil
}
