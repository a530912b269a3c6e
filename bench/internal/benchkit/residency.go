package benchkit

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SectionResidency is how much of one allocated section of a process's
// executable is resident (its pages present in the process's page table),
// in KiB.
type SectionResidency struct {
	Name           string
	Size, Resident int64
}

// ExeResidency reads, for each allocated section of pid's executable
// (/proc/PID/exe), how many of its pages are resident in pid, from
// /proc/PID/maps and the present bit of /proc/PID/pagemap (readable for
// one's own processes without privileges). A page shared by two sections
// counts for each, at most the section's own bytes. It explains RssFile: how much of the binary a run has
// touched, or has had mapped around what it touched.
func ExeResidency(pid int) ([]SectionResidency, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	present, err := presentPages(pid, exe)
	if err != nil {
		return nil, err
	}
	const page = 4096
	var out []SectionResidency
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 || s.Type == elf.SHT_NOBITS {
			continue // not loaded, or zero-filled (bss: anonymous, not the file's)
		}
		var res int64
		for p := s.Addr &^ (page - 1); p < s.Addr+s.Size; p += page {
			if present[p] {
				res++
			}
		}
		// A section's first and last pages may be shared with its
		// neighbours: count no more than the section's own bytes.
		resBytes := min(res*page, int64(s.Size))
		out = append(out, SectionResidency{Name: s.Name, Size: ceilKiB(int64(s.Size)), Resident: ceilKiB(resBytes)})
	}
	return out, nil
}

func ceilKiB(b int64) int64 { return (b + 1023) / 1024 }

// presentPages returns the virtual addresses of the present pages of pid's
// mappings of the file exe.
func presentPages(pid int, exe string) (map[uint64]bool, error) {
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	present := map[uint64]bool{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/%d/maps: %q", pid, fields[0])
		}
		buf := make([]byte, (end-start)/4096*8)
		if _, err := pm.ReadAt(buf, int64(start/4096*8)); err != nil {
			return nil, fmt.Errorf("/proc/%d/pagemap: %w", pid, err)
		}
		for i := 0; i < len(buf); i += 8 {
			if binary.LittleEndian.Uint64(buf[i:])>>63 == 1 { // bit 63: present
				present[start+uint64(i/8)*4096] = true
			}
		}
	}
	return present, sc.Err()
}
