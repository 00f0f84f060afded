//go:build !unix

package tools

// othersMayWrite is not checked on systems without Unix modes (Windows
// keeps who may write in ACLs): the operator's word is taken.
func othersMayWrite(string) (string, error) { return "", nil }
