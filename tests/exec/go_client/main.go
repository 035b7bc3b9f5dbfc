// SPDX-License-Identifier: MIT

// A Go program, linked dynamically (cgo), as a Go tool under `ucmd exec`
// is: its runtime lists directories and runs children with its own
// system call instructions, never libc's, and installs its own SIGSYS
// handler.
//
//	go_client DIR PROG [ARGS...]
//	go_client open PATH
//
// Prints the entries of DIR that start with "nvme" or "ng" ("dev: a b c"),
// then runs PROG through os/exec ("exec: OUTPUT" or "exec error: ERR").
// With "open": os.Open(PATH) ("open error: ERR"), then NVME_IOCTL_ID on it
// ("nsid N" or "nsid error: ERR") and a read of 4096 bytes ("data: " and
// the first 8 bytes in hex, or "read error: ERR").
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"os/exec"
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
