package main

import "testing"

func TestShortFrames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a;<futures_util::stream::Flatten<St,<St as futures_core::Stream>::Item> as futures_core::Stream>::poll_next;b 42\n",
			"a;<futures_util::stream::Flatten as futures_core::Stream>::poll_next;b 42\n"},
		{"poll_next<tokio::FramedRead<X<Y>>>;{async_fn#0}<Z>;serde_json::de::from_str 7\n",
			"poll_next;{async_fn#0};serde_json::de::from_str 7\n"},
		{"call_once<Box<dyn Fn(A) -> B>>;<Vec<T> as Drop>::drop 3\n", "call_once;<Vec as Drop>::drop 3\n"},
		// A symbol cut off inside its generics does not swallow the next frame.
		{"broken<a<b;next 1\n", "broken;next 1\n"},
		{"x::y -> z 2\n", "x::y -> z 2\n"},
		// A `; ` is part of a name, not a frame's end.
		{"a;poll<[u8; 16], T>;b 4\n", "a;poll;b 4\n"},
		// The count survives a last frame left open.
		{"a;poll<x, y 5\n", "a;poll 5\n"},
	} {
		if got := shortFrames(c.in); got != c.want {
			t.Errorf("shortFrames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
