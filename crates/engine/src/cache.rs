//! The prefix cache: prompt prefixes that several requests share, held once in KV
//! memory, referenced by the running requests that use them, kept after they finish
//! until memory is needed, then evicted least recently used first.
//!
//! ```text
//!   a request's prompt = segment path: [shared prefix g: 2,000 tokens][session s: 3,400]…
//!   segment s ─ cached tokens (a prefix of its content) ─ refs (running users) ─ LRU stamp
//!   admission: hit = the cached tokens of the path, in order, up to the first segment not
//!              wholly cached; whole blocks only; at least one prompt token computed
//!   prefill done: each segment of the path grows to what the request computed
//!   finish / preemption: the path's references are dropped; an unreferenced segment
//!              becomes evictable, deepest segment first in line
//! ```
//!
//! A segment stands for the blocks of one shared stretch of tokens (a system prompt, a
//! document, a conversation so far), so bookkeeping costs a few operations a request
//! rather than one per block. Memory is counted in tokens: the cached tokens of every
//! segment once, plus each running request's own (private) tokens.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One request's prompt as segments: `(segment, tokens of its prompt in that segment)`,
/// outermost first.
pub type Path<'a> = &'a [(u32, u32)];

/// The cache's state.
#[derive(Debug, Clone)]
pub struct PrefixCache {
    /// Tokens per KV block; hits are whole blocks (1: any token count).
    block: u32,
    /// Cached tokens of each segment.
    cached: Vec<u32>,
    /// Running requests holding each segment.
    refs: Vec<u32>,
    /// When each segment last became unreferenced (larger is later).
    stamp: Vec<u64>,
    /// Segments that are never evicted (a prefix stated as always cached).
    pinned: Vec<bool>,
    /// Unreferenced segments by stamp, oldest first; stale entries are skipped.
    lru: BinaryHeap<Reverse<(u64, u32)>>,
    next_stamp: u64,
    /// Cached tokens over all segments.
    tokens: u64,
    /// Cached tokens of unreferenced, unpinned segments: memory that can be freed.
    evictable: u64,
    /// Prompt tokens looked up, and of them found cached (for the hit rate).
    looked_up: u64,
    hit: u64,
    /// Tokens evicted so far.
    evicted: u64,
}

impl PrefixCache {
    /// An empty cache of `segments` segments with blocks of `block` tokens; `pinned`
    /// segments start cached with the given tokens and stay.
    pub fn new(segments: u32, block: u32, pinned: &[(u32, u32)]) -> PrefixCache {
        let n = segments as usize;
        let mut c = PrefixCache {
            block: block.max(1),
            cached: vec![0; n],
            refs: vec![0; n],
            stamp: vec![0; n],
            pinned: vec![false; n],
            lru: BinaryHeap::new(),
            next_stamp: 1,
            tokens: 0,
            evictable: 0,
            looked_up: 0,
            hit: 0,
            evicted: 0,
        };
        for &(s, t) in pinned {
            if let Some(p) = c.pinned.get_mut(s as usize) {
                *p = true;
                c.cached[s as usize] = t;
                c.tokens += t as u64;
            }
        }
        c
    }

    /// Cached tokens over all segments [tokens].
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Cached tokens no running request holds and no pin keeps [tokens].
    pub fn evictable(&self) -> u64 {
        self.evictable
    }

    /// Cached tokens that must stay: held by running requests or pinned [tokens].
    pub fn held(&self) -> u64 {
        self.tokens - self.evictable
    }

    /// Tokens evicted so far [tokens].
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Share of the prompt tokens looked up that were found cached [0..1].
    pub fn hit_rate(&self) -> f64 {
        if self.looked_up == 0 {
            0.0
        } else {
            self.hit as f64 / self.looked_up as f64
        }
    }

    /// Tokens of `path` found cached, for a prompt of `prompt` tokens: segment by
    /// segment while each is wholly cached, then what the next one has; whole blocks;
    /// at most `prompt − 1` (the last prompt token is always computed, to emit the first
    /// output token).
    pub fn lookup(&self, path: Path<'_>, prompt: u32) -> u32 {
        let mut h = 0u32;
        for &(s, used) in path {
            let c = self.cached[s as usize];
            if c >= used {
                h += used;
            } else {
                h += c;
                break;
            }
        }
        let h = if self.block > 1 {
            h - h % self.block
        } else {
            h
        };
        h.min(prompt.saturating_sub(1))
    }

    /// The cached tokens of the unreferenced segments of `path`: memory a request of
    /// this path would keep from eviction by holding them [tokens].
    pub fn unheld_in(&self, path: Path<'_>) -> u64 {
        path.iter()
            .filter(|&&(s, _)| self.refs[s as usize] == 0 && !self.pinned[s as usize])
            .map(|&(s, _)| self.cached[s as usize] as u64)
            .sum()
    }

    /// A request of `path` is admitted with `hit` tokens found for a prompt of `prompt`:
    /// it holds every segment of its path.
    pub fn admit(&mut self, path: Path<'_>, hit: u32, prompt: u32) {
        for &(s, _) in path {
            let i = s as usize;
            if self.refs[i] == 0 && !self.pinned[i] {
                self.evictable -= self.cached[i] as u64;
            }
            self.refs[i] += 1;
        }
        self.looked_up += prompt as u64;
        self.hit += hit as u64;
    }

    /// A request of `path` computed its prompt: each segment grows to the tokens the
    /// request has of it. Returns the tokens that moved from the request's own memory into
    /// the cache.
    pub fn fill(&mut self, path: Path<'_>) -> u32 {
        let mut moved = 0;
        for &(s, used) in path {
            let i = s as usize;
            if used > self.cached[i] {
                moved += used - self.cached[i];
                self.tokens += (used - self.cached[i]) as u64;
                self.cached[i] = used;
            }
        }
        moved
    }

    /// Grows segment `s` to `tokens` (a conversation whose next turn holds this reply);
    /// the segment is held, so nothing becomes evictable. Returns the tokens added.
    pub fn extend(&mut self, s: u32, tokens: u32) -> u32 {
        let i = s as usize;
        if tokens > self.cached[i] {
            let add = tokens - self.cached[i];
            self.cached[i] = tokens;
            self.tokens += add as u64;
            add
        } else {
            0
        }
    }

    /// A request of `path` ended (finished or preempted): it lets go of its segments,
    /// the deepest first, so that eviction takes a conversation's tail before its root.
    pub fn release(&mut self, path: Path<'_>) {
        for &(s, _) in path.iter().rev() {
            let i = s as usize;
            self.refs[i] -= 1;
            if self.refs[i] == 0 && !self.pinned[i] {
                self.evictable += self.cached[i] as u64;
                self.stamp[i] = self.next_stamp;
                self.next_stamp += 1;
                if self.cached[i] > 0 {
                    self.lru.push(Reverse((self.stamp[i], s)));
                }
            }
        }
    }

    /// Frees at least `need` tokens of evictable memory (or all of it), least recently
    /// used segments first, each from its tail in whole blocks. Returns the tokens freed.
    pub fn evict(&mut self, need: u64) -> u64 {
        let mut freed = 0u64;
        while freed < need {
            let Some(Reverse((stamp, s))) = self.lru.pop() else {
                break;
            };
            let i = s as usize;
            if self.refs[i] != 0 || self.pinned[i] || self.stamp[i] != stamp || self.cached[i] == 0
            {
                continue; // stale: held again, or already emptied
            }
            let want = need - freed;
            let c = self.cached[i] as u64;
            let take = if want >= c {
                c
            } else {
                // Whole blocks from the tail, at least the amount wanted.
                let b = self.block as u64;
                want.div_ceil(b).saturating_mul(b).min(c)
            };
            self.cached[i] -= take as u32;
            self.tokens -= take;
            self.evictable -= take;
            freed += take;
            if self.cached[i] > 0 {
                self.lru.push(Reverse((stamp, s)));
            }
        }
        self.evicted += freed;
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_stop_at_the_first_segment_not_wholly_cached_and_keep_a_token_to_compute() {
        let mut c = PrefixCache::new(3, 16, &[]);
        let path = [(0u32, 100u32), (1, 300)];
        assert_eq!(c.lookup(&path, 500), 0);
        c.admit(&path, 0, 500);
        assert_eq!(c.fill(&path), 400);
        assert_eq!(c.tokens(), 400);
        assert_eq!(c.evictable(), 0);
        // Another request of the same path, a longer one of the same conversation.
        let longer = [(0u32, 100u32), (1, 450)];
        assert_eq!(c.lookup(&longer, 600), 400);
        // A prompt wholly cached still computes its last token: 399 rounds down to 384.
        assert_eq!(c.lookup(&path, 400), 384);
        // The root alone cached: the hit stops inside the second segment.
        let other = [(0u32, 100u32), (2, 50)];
        assert_eq!(c.lookup(&other, 200), 96);
        c.release(&path);
        assert_eq!(c.evictable(), 400);
    }

    #[test]
    fn eviction_takes_the_least_recently_released_and_the_tail_first() {
        let mut c = PrefixCache::new(4, 16, &[]);
        for (s, t) in [(0u32, 160u32), (1, 320), (2, 64)] {
            let p = [(s, t)];
            c.admit(&p, 0, t + 1);
            c.fill(&p);
        }
        // Released in the order 1, 0, 2: segment 1 is the oldest.
        c.release(&[(1, 320)]);
        c.release(&[(0, 160)]);
        c.release(&[(2, 64)]);
        assert_eq!(c.evictable(), 544);
        // 20 tokens: two blocks off segment 1's tail.
        assert_eq!(c.evict(20), 32);
        assert_eq!(c.lookup(&[(1, 320)], 1000), 288);
        // More than segment 1 holds: all of it, then segment 0 from its tail.
        assert_eq!(c.evict(300), 304);
        assert_eq!(c.lookup(&[(1, 320)], 1000), 0);
        assert_eq!(c.lookup(&[(0, 160)], 1000), 144);
        // A held segment is not evicted.
        c.admit(&[(2, 64)], 64, 65);
        assert_eq!(c.evict(1000), 144);
        assert_eq!(c.tokens(), 64);
        assert_eq!(c.evictable(), 0);
    }

    #[test]
    fn a_pinned_prefix_is_cached_from_the_start_and_never_evicted() {
        let mut c = PrefixCache::new(1, 1, &[(0, 5000)]);
        assert_eq!(c.tokens(), 5000);
        assert_eq!(c.held(), 5000);
        assert_eq!(c.lookup(&[(0, 5000)], 5800), 5000);
        c.admit(&[(0, 5000)], 5000, 5800);
        c.release(&[(0, 5000)]);
        assert_eq!(c.evict(10_000), 0);
        assert_eq!(c.tokens(), 5000);
        assert!((c.hit_rate() - 5000.0 / 5800.0).abs() < 1e-12);
    }
}
