package main

// SCALE_PERF: a CPU profile of ours' start (docs/scale.md, "Ours' CPU at start,
// profiled"). `perf record` attaches to the controller's process right after it started
// and is stopped (SIGINT) once every Gateway is healthy; run.sh folds its data into a
// flame graph afterwards. perf samples at 499 Hz (not a multiple of the kernel's tick) and
// unwinds each sample's stack from DWARF call frame information (`--call-graph dwarf`):
// the release build keeps no frame pointers (Rust's default, and the standard library is
// built without them), so `fp` would cut every stack at the first frame of ours, and
// `lbr` needs Intel hardware branch records, which a virtual machine seldom exposes.
// DWARF copies the stack of each sample into the data file, here the most perf takes
// (65,528 bytes): with 16 KiB, seven samples in ten were cut off before their thread's
// root, the watch events' JSON being read recursively, deep in the stack. The perf process
// writes the data, the kernel copies it: the CPU figures of a profiled run are not the
// harness's measurement.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// perfRecord is one `perf record` attached to a process.
type perfRecord struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when perf has exited
	data string
}

// startPerf attaches `perf record` to pid when SCALE_PERF names a directory (nil, nil when
// it does not), its data written to DIR/NAME.perf.data.
func startPerf(pid int, name string) (*perfRecord, error) {
	dir := os.Getenv("SCALE_PERF")
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, name+".perf.data")
	cmd := exec.Command("perf", "record", "-F", "499", "-g", "--call-graph", "dwarf,65528",
		"-p", strconv.Itoa(pid), "-o", data)
	log, err := os.Create(filepath.Join(dir, name+".perf.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	say("perf record attached to %d, its data in %s", pid, data)
	return &perfRecord{cmd: cmd, done: done, data: data}, nil
}

// stop ends the recording (SIGINT, as ^C: perf writes its data and exits) and waits for
// it (60 s, then SIGKILL). A nil recording is a no-op.
func (p *perfRecord) stop() {
	if p == nil {
		return
	}
	signalThenKill(p.cmd, p.done, syscall.SIGINT, 60*time.Second)
}

// shortFrames shortens the frames of folded stacks (inferno-collapse-perf's output: frames
// joined by `;`, then a space and the count) for a flame graph of readable size: a Rust
// symbol's generic arguments are dropped (`Flatten<St, <St as Stream>::Item>::poll_next`
// becomes `Flatten::poll_next`), a qualified path keeps its two types (`<Value as
// Deserialize>::deserialize`). The count is left alone; stacks that become the same are
// summed by the flame graph.
func shortFrames(line string) string {
	// The count, kept whatever the frames hold (a symbol may be cut off inside its
	// generics).
	stacks, count := line, ""
	if i := strings.LastIndexByte(strings.TrimRight(line, "\n"), ' '); i >= 0 {
		stacks, count = line[:i], line[i:]
	}
	return shortStacks(stacks) + count
}

// shortStacks is shortFrames on the frames alone.
func shortStacks(line string) string {
	var b strings.Builder
	b.Grow(len(line))
	// For each `<` open: whether it opened generic arguments (dropped).
	var open []bool
	dropping := 0
	prev := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '-' && i+1 < len(line) && line[i+1] == '>':
			// `->` of a function type: no bracket.
			if dropping == 0 {
				b.WriteString("->")
			}
			i++
			c = '>'
		case c == '<':
			generic := dropping > 0 || isIdent(prev) || prev == '}' || prev == ']'
			open = append(open, generic)
			if generic {
				dropping++
			} else {
				b.WriteByte(c)
			}
		case c == '>' && len(open) > 0:
			generic := open[len(open)-1]
			open = open[:len(open)-1]
			if generic {
				dropping--
			} else {
				b.WriteByte(c)
			}
		case c == ';' && (i+1 == len(line) || line[i+1] != ' '):
			// A new frame (a `; ` is inside a name: an array type, `[u8; 16]`): whatever
			// a truncated symbol left open ends here.
			open, dropping = open[:0], 0
			b.WriteByte(c)
		default:
			if dropping == 0 {
				b.WriteByte(c)
			}
		}
		prev = c
	}
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// flameNames is `scale flame-names`: folded stacks from stdin to stdout, each line through
// shortFrames.
func flameNames() error {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadString('\n')
		if line != "" {
			if _, werr := out.WriteString(shortFrames(line)); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return out.Flush()
		}
		if err != nil {
			return err
		}
	}
}
