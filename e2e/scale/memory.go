package main

// The memory floor (docs/scale.md, "The memory floor"): what our controller must hold —
// the objects of its seven watch caches, as its reflector stores hold them — measured by
// gateway-reconcile-kube's example `held_bytes` on the objects the API server holds once
// ours has converged; and the base: ours' peak resident memory on a control plane with no
// Gateway. Its peak RSS is then read against both.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// heldCache is one cache of `held_bytes`'s answer.
type heldCache struct {
	Name      string `json:"name"`
	Objects   int    `json:"objects"`
	JSONBytes int64  `json:"json_bytes"`
	HeldBytes int64  `json:"held_bytes"`
}

// held is `held_bytes`'s answer: every cache, and their sums.
type held struct {
	Caches    []heldCache `json:"caches"`
	Objects   int         `json:"objects"`
	JSONBytes int64       `json:"json_bytes"`
	HeldBytes int64       `json:"held_bytes"`
}

// memoryFloor is what a run says of ours' memory against the data it holds.
type memoryFloor struct {
	// Ours' peak RSS 5 s after its start on a control plane with no Gateway (MiB).
	BaseMiB float64 `json:"base_mib"`
	Held    held    `json:"held"`
}

// heldMiB is the caches' bytes in MiB.
func (m memoryFloor) heldMiB() float64 { return float64(m.Held.HeldBytes) / (1 << 20) }

// bound is the goal of issue 35 for a peak RSS: twice the held data, plus the base.
func (m memoryFloor) bound() float64 { return 2*m.heldMiB() + m.BaseMiB }

// against is a peak RSS over the bound (0 when the run measured no held data).
func (m memoryFloor) against(peakMiB float64) float64 {
	if m.Held.HeldBytes == 0 {
		return 0
	}
	return peakMiB / m.bound()
}

// baseRSS starts ours on a control plane with no Gateway and reads its peak RSS after 5 s
// (its watches have listed nothing and wait).
func baseRSS(c *controller) (float64, error) {
	if err := c.start(); err != nil {
		return 0, err
	}
	defer c.stop()
	time.Sleep(5 * time.Second)
	if !c.alive() {
		return 0, fmt.Errorf("ours exited with no Gateway (log %s)", c.log)
	}
	u, err := c.usage()
	return u.PeakRSSMiB, err
}

// heldBytes lists, as the admin, what each of ours' watches caches (the paths, selectors
// and metadata-only answers of floorWatches), writes each List to a directory and runs
// `held_bytes` on it.
func heldBytes(ctx context.Context, heldBin string) (held, error) {
	var h held
	f, err := newFloorClient(os.Getenv("KUBECONFIG"), true)
	if err != nil {
		return h, err
	}
	defer f.transport.CloseIdleConnections()
	dir, err := os.MkdirTemp("", "scale-held")
	if err != nil {
		return h, err
	}
	defer os.RemoveAll(dir)
	for _, w := range floorWatches {
		path := w.path
		if w.selector != "" {
			path += "?labelSelector=" + url.QueryEscape(w.selector)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.server+path, nil)
		if err != nil {
			return h, err
		}
		req.Header.Set("Accept", "application/json")
		if w.metadata {
			// A LIST answers a list of them (a watch, each object: metadataJSON).
			req.Header.Set("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
		}
		resp, err := f.http.Do(req)
		if err != nil {
			return h, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return h, err
		}
		if resp.StatusCode != http.StatusOK {
			return h, fmt.Errorf("list %s: %d %s", w.name, resp.StatusCode, shorten(string(body)))
		}
		if err := os.WriteFile(filepath.Join(dir, w.name+".json"), body, 0o600); err != nil {
			return h, err
		}
	}
	out, err := exec.Command(heldBin, dir).Output()
	if err != nil {
		return h, fmt.Errorf("held_bytes: %w", err)
	}
	return h, json.Unmarshal(out, &h)
}
