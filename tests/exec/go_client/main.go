// SPDX-License-Identifier: MIT

// A Go program, linked dynamically (cgo), as a Go tool under `ucmd exec`
// is: its runtime lists directories and runs children with its own
// system call instructions, never libc's, and installs its own SIGSYS
// handler.
//
//	go_client DIR PROG [ARGS...]
//	go_client open PATH
//	go_client look OP ARG [OP ARG...]
//
// Prints the entries of DIR that start with "nvme" or "ng" ("dev: a b c"),
// then runs PROG through os/exec ("exec: OUTPUT" or "exec error: ERR").
// With "open": os.Open(PATH) ("open error: ERR"), then NVME_IOCTL_ID on it
// ("nsid N" or "nsid error: ERR") and a read of 4096 bytes ("data: " and
// the first 8 bytes in hex, or "read error: ERR").
// With "look", one line per OP, in order, each "OP ARG: RESULT" or
// "OP ARG: error ERR": stat and lstat (os.Stat, os.Lstat: the kind, c b d
// l f, the permission bits and the device number MAJ:MIN), readlink
// (os.Readlink), eval (filepath.EvalSymlinks), readdir (os.ReadDir: the
// names that start with "nvme" or "ng"), read (os.ReadFile), write
// (os.OpenFile for writing), open (os.Open then NVME_IOCTL_ID: "nsid N"),
// sh (runs sh -c ARG: "ok" or the error).
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

const nvmeIoctlID = 0x4e40 // _IO('N', 0x40)

func openAndRead(path string) {
	f, err := os.Open(path)
	if err != nil {
		fmt.Println("open error:", err)
		return
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		fmt.Println("open error:", err)
		return
	}
	sc.Control(func(fd uintptr) {
		nsid, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, nvmeIoctlID, 0)
		if e != 0 {
			fmt.Println("nsid error:", e)
		} else {
			fmt.Println("nsid", nsid)
		}
	})
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if err != nil {
		fmt.Println("read error:", err)
	} else if n < 8 {
		fmt.Println("read error: short,", n)
	} else {
		fmt.Printf("data: %x\n", buf[:8])
	}
}

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeCharDevice != 0:
		return "c"
	case m&os.ModeDevice != 0:
		return "b"
	case m.IsDir():
		return "d"
	case m&os.ModeSymlink != 0:
		return "l"
	}
	return "f"
}

func nvmeNames(ents []os.DirEntry) string {
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "nvme") || strings.HasPrefix(e.Name(), "ng") {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, " ")
}

func look(op, arg string) (string, error) {
	switch op {
	case "stat", "lstat":
		st, err := os.Stat(arg)
		if op == "lstat" {
			st, err = os.Lstat(arg)
		}
		if err != nil {
			return "", err
		}
		rdev := st.Sys().(*syscall.Stat_t).Rdev
		return fmt.Sprintf("%s %o %d:%d", kind(st.Mode()), st.Mode().Perm(),
			(rdev>>8)&0xfff, (rdev&0xff)|((rdev>>12)&0xfff00)), nil
	case "readlink":
		return os.Readlink(arg)
	case "eval":
		return filepath.EvalSymlinks(arg)
	case "readdir":
		ents, err := os.ReadDir(arg)
		return nvmeNames(ents), err
	case "read":
		b, err := os.ReadFile(arg)
		return strings.TrimSpace(string(b)), err
	case "write":
		f, err := os.OpenFile(arg, os.O_WRONLY, 0)
		if err != nil {
			return "", err
		}
		f.Close()
		return "ok", nil
	case "open":
		f, err := os.Open(arg)
		if err != nil {
			return "", err
		}
		defer f.Close()
		nsid, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), nvmeIoctlID, 0)
		if e != 0 {
			return "", e
		}
		return fmt.Sprintf("nsid %d", nsid), nil
	case "sh":
		out, err := exec.Command("sh", "-c", arg).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, out)
		}
		return "ok", nil
	}
	return "", fmt.Errorf("unknown op")
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go_client DIR PROG [ARGS...]")
		os.Exit(2)
	}
	// a call into libc: the binary is linked dynamically, and so preloaded
	p := C.malloc(1)
	C.free(unsafe.Pointer(p))
	if os.Args[1] == "open" {
		openAndRead(os.Args[2])
		return
	}
	if os.Args[1] == "look" {
		for i := 2; i+1 < len(os.Args); i += 2 {
			res, err := look(os.Args[i], os.Args[i+1])
			if err != nil {
				fmt.Printf("%s %s: error %v\n", os.Args[i], os.Args[i+1], err)
			} else {
				fmt.Printf("%s %s: %s\n", os.Args[i], os.Args[i+1], res)
			}
		}
		return
	}
	ents, err := os.ReadDir(os.Args[1])
	if err != nil {
		fmt.Println("readdir:", err)
		os.Exit(1)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "nvme") || strings.HasPrefix(e.Name(), "ng") {
			names = append(names, e.Name())
		}
	}
	fmt.Println("dev:", strings.Join(names, " "))
	out, err := exec.Command(os.Args[2], os.Args[3:]...).CombinedOutput()
	if err != nil {
		fmt.Println("exec error:", err)
		return
	}
	fmt.Println("exec:", strings.TrimSpace(string(out)))
}
