// SPDX-License-Identifier: MIT

// A Go program, linked dynamically (cgo), as a Go tool under `ucmd exec`
// is: its runtime lists directories and runs children with its own
// system call instructions, never libc's, and installs its own SIGSYS
// handler.
//
//	go_client DIR PROG [ARGS...]
//
// Prints the entries of DIR that start with "nvme" or "ng" ("dev: a b c"),
// then runs PROG through os/exec ("exec: OUTPUT" or "exec error: ERR").
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unsafe"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go_client DIR PROG [ARGS...]")
		os.Exit(2)
	}
	// a call into libc: the binary is linked dynamically, and so preloaded
	p := C.malloc(1)
	C.free(unsafe.Pointer(p))
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
