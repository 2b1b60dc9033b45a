//go:build linux

package localcluster

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// freePorts asks the kernel for n distinct free loopback ports. Between closing them here and the
// component binding them another process may take one; callers detect that and retry.
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listensOn reports whether process pid holds a listening TCP socket on every given port. A health
// check alone cannot tell our component from another cluster's that won a port race; socket
// ownership can.
func listensOn(pid int, ports []int) bool {
	if len(ports) == 0 {
		return true
	}
	inodes := listeningInodes(pid, ports)
	if len(inodes) < len(ports) {
		return false
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	owned := map[int]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		if port, ok := inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")]; ok {
			owned[port] = true
		}
	}
	return len(owned) == len(ports)
}

// listeningInodes maps socket inode to port for every LISTEN socket on one of ports, as seen in
// the network namespace of pid.
func listeningInodes(pid int, ports []int) map[string]int {
	want := map[int]bool{}
	for _, p := range ports {
		want[p] = true
	}
	inodes := map[string]int{}
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A is TCP_LISTEN
				continue
			}
			i := strings.LastIndexByte(fields[1], ':')
			port, err := strconv.ParseInt(fields[1][i+1:], 16, 32)
			if err != nil || !want[int(port)] {
				continue
			}
			inodes[fields[9]] = int(port)
		}
		_ = f.Close()
	}
	return inodes
}
