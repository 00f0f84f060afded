package devserver

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrDBInUse is wrapped by Start's error when another process runs a server on
// Options.DBFile. Two servers on one SQLite file would both own every shard of the same
// history and corrupt it, so the second one must not start there.
var ErrDBInUse = errors.New("database in use")

// sqliteDMSByte is the byte of a WAL database's -shm file on which SQLite holds a read
// lock for as long as a connection is open (its "dead man switch": 120 for the WAL-index
// lock bytes, plus their 8 locks).
const sqliteDMSByte = 128

// lockDB claims the SQLite file db for one server until unlock is called. Two checks:
//
//   - an flock on db+".lock", which every todoflow process holds while its server runs on
//     db (the kernel drops it when the process dies, so a crash leaves no stale lock);
//   - SQLite's own lock, for servers that todoflow did not start (`temporal server
//     start-dev --db-filename` run by hand): in WAL mode, which this package sets, every
//     open connection holds a read lock on the -shm file's DMS byte.
func lockDB(db string) (unlock func(), err error) {
	f, err := os.OpenFile(db+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the dev server database's lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is used by another todoflow server (a `worker --dev` or a `starter run`)", ErrDBInUse, db)
		}
		return nil, fmt.Errorf("locking %s.lock: %w", db, err)
	}
	unlock = func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
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
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sqliteDMSByte, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return 0, err
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, nil
	}
	return int(lk.Pid), nil
}
