//! The prefix cache: prompt prefixes that several requests share, held once in KV
//! memory, referenced by the running requests that use them, kept after they finish
//! until memory is needed, then evicted least recently used first.
//!
//! ```text
//!   a request's path = segments: [shared prefix g: 2,000 tokens][session s: 3,400][own: 900]
//!   segment s ─ cached tokens (a prefix of its content) ─ holders (the running requests
//!               using it, each up to its own length) ─ LRU stamp
//!   admission: hit = the cached tokens of the path, in order, up to the first segment not
//!              wholly cached; whole blocks only; at least one prompt token computed
//!   prefill done: each segment of the path grows to what the request computed
//!   finish / preemption: the path's holds are dropped, the deepest segment first
//!   memory: what some running request holds must stay; the rest of a segment (its
//!           tail beyond the longest hold, or all of it when nobody holds it) is
//!           evictable, least recently let go first, from the tail, in whole blocks
//! ```
//!
//! A segment stands for the blocks of one shared stretch of tokens (a system prompt, a
//! document, a conversation so far, what one request computed beyond them), so the
//! bookkeeping costs a few operations a request rather than one per block. A running
//! request holds a segment only as far as its own prompt reaches into it, as an
//! engine's blocks are held one by one: a conversation's later turns cached behind an
//! earlier turn that is running stay evictable.

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
    /// How far into each segment the running requests reach: every holder's length
    /// (usually none or one, a few for a shared prefix's or a session's).
    holders: Vec<Vec<u32>>,
    /// When each segment's evictable part last grew (larger is later).
    stamp: Vec<u64>,
    /// Segments that are never evicted (a prefix stated as always cached).
    pinned: Vec<bool>,
    /// Segments with an evictable part, by stamp, oldest first; stale entries skipped.
    lru: BinaryHeap<Reverse<(u64, u32)>>,
    next_stamp: u64,
    /// Cached tokens over all segments.
    tokens: u64,
    /// Cached tokens no running request holds and no pin keeps: memory that can be freed.
    evictable: u64,
    /// Prompt tokens looked up, and of them found cached (for the hit rate).
    looked_up: u64,
    hit: u64,
    /// Tokens evicted so far.
    evicted: u64,
}

impl PrefixCache {
    /// An empty cache of `segments` segments with blocks of `block` tokens; `pinned`
    /// segments start cached with the given tokens and stay; `preloaded` ones start
    /// cached and evictable (oldest first in the order given).
    pub fn new(
        segments: u32,
        block: u32,
        pinned: &[(u32, u32)],
        preloaded: &[(u32, u32)],
    ) -> PrefixCache {
        let n = segments as usize;
        let mut c = PrefixCache {
            block: block.max(1),
            cached: vec![0; n],
            holders: vec![Vec::new(); n],
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
        for &(s, t) in preloaded {
            let i = s as usize;
            if i < n && !c.pinned[i] {
                c.tokens += t.saturating_sub(c.cached[i]) as u64;
                c.update(i, |c| c.cached[i] = c.cached[i].max(t));
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

    /// Prompt tokens looked up so far, and of them found cached [tokens].
    pub fn lookups(&self) -> (u64, u64) {
        (self.looked_up, self.hit)
    }

    /// Share of the prompt tokens looked up that were found cached [0..1].
    pub fn hit_rate(&self) -> f64 {
        if self.looked_up == 0 {
            0.0
        } else {
            self.hit as f64 / self.looked_up as f64
        }
    }

    /// Cached tokens that must stay in the segments `segs` (held or pinned) [tokens];
    /// one pass over them.
    pub fn held_in(&self, segs: std::ops::Range<u32>) -> u64 {
        let end = (segs.end as usize).min(self.cached.len());
        (segs.start as usize..end)
            .map(|i| (self.cached[i] - self.free_part(i)) as u64)
            .sum()
    }

    /// How far the running requests reach into segment `i` [tokens].
    fn reach(&self, i: usize) -> u32 {
        self.holders[i].iter().copied().max().unwrap_or(0)
    }

    /// The evictable tokens of segment `i`: its cached tokens beyond the longest hold,
    /// none when pinned.
    fn free_part(&self, i: usize) -> u32 {
        if self.pinned[i] {
            0
        } else {
            self.cached[i].saturating_sub(self.reach(i))
        }
    }

    /// Runs `change` on segment `i`, keeping the evictable total in step; when the
    /// evictable part grows, the segment joins the LRU order as just let go.
    fn update(&mut self, i: usize, change: impl FnOnce(&mut PrefixCache)) {
        let before = self.free_part(i);
        change(self);
        let after = self.free_part(i);
        self.evictable = self.evictable + after as u64 - before as u64;
        if after > before {
            self.stamp[i] = self.next_stamp;
            self.next_stamp += 1;
            self.lru.push(Reverse((self.stamp[i], i as u32)));
        }
    }

    /// Tokens of `path` found cached, for a prompt of `prompt` tokens: segment by
    /// segment while each is wholly cached, then what the next one has; at most
    /// `prompt − 1` (the last prompt token is always computed, to emit the first output
    /// token); whole blocks.
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
        let h = h.min(prompt.saturating_sub(1));
        if self.block > 1 {
            h - h % self.block
        } else {
            h
        }
    }

    /// The cached tokens a request of `path` would newly hold (evictable now, held once
    /// it runs): memory it would keep from eviction [tokens].
    pub fn unheld_in(&self, path: Path<'_>) -> u64 {
        path.iter()
            .filter(|&&(s, _)| !self.pinned[s as usize])
            .map(|&(s, used)| {
                let i = s as usize;
                let c = self.cached[i];
                let r = self.reach(i);
                (c.min(used.max(r)) - c.min(r)) as u64
            })
            .sum()
    }

    /// A request of `path` is admitted with `hit` tokens found for a prompt of `prompt`:
    /// it holds each segment of its path as far as its prompt reaches.
    pub fn admit(&mut self, path: Path<'_>, hit: u32, prompt: u32) {
        for &(s, used) in path {
            self.update(s as usize, |c| c.holders[s as usize].push(used));
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
                let add = used - self.cached[i];
                moved += add;
                self.tokens += add as u64;
                self.update(i, |c| c.cached[i] = used);
            }
        }
        moved
    }

    /// Grows segment `s` to `tokens` (a reply its conversation keeps, or what a request
    /// generated); held as far as the segment's holders reach. Returns the tokens added.
    pub fn extend(&mut self, s: u32, tokens: u32) -> u32 {
        let i = s as usize;
        if tokens > self.cached[i] {
            let add = tokens - self.cached[i];
            self.tokens += add as u64;
            self.update(i, |c| c.cached[i] = tokens);
            add
        } else {
            0
        }
    }

    /// A request of `path` ended (finished or preempted): it lets go of its holds, the
    /// deepest segment first, so that eviction takes a conversation's tail before its root.
    pub fn release(&mut self, path: Path<'_>) {
        for &(s, used) in path.iter().rev() {
            let i = s as usize;
            self.update(i, |c| {
                let h = &mut c.holders[i];
                if let Some(k) = h.iter().position(|&u| u == used) {
                    h.swap_remove(k);
                }
            });
        }
    }

    /// Frees at least `need` tokens of evictable memory (or all of it), least recently
    /// let go first, each segment from its tail in whole blocks down to what its holders
    /// reach. Returns the tokens freed.
    pub fn evict(&mut self, need: u64) -> u64 {
        let mut freed = 0u64;
        while freed < need {
            let Some(Reverse((stamp, s))) = self.lru.pop() else {
                break;
            };
            let i = s as usize;
            let free = self.free_part(i) as u64;
            if self.stamp[i] != stamp || free == 0 {
                continue; // stale: let go again later, held again, or already emptied
            }
            let want = need - freed;
            let take = if want >= free {
                free
            } else {
                // Whole blocks from the tail, at least the amount wanted.
                let b = self.block as u64;
                want.div_ceil(b).saturating_mul(b).min(free)
            };
            self.cached[i] -= take as u32;
            self.tokens -= take;
            self.evictable -= take;
            freed += take;
            if self.free_part(i) > 0 {
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
        let mut c = PrefixCache::new(3, 16, &[], &[]);
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
    fn a_running_request_holds_a_segment_only_as_far_as_its_prompt_reaches() {
        let mut c = PrefixCache::new(2, 16, &[], &[]);
        // Turn 3 of a conversation computed and finished: 900 tokens cached, free.
        let turn3 = [(0u32, 900u32)];
        c.admit(&turn3, 0, 901);
        c.fill(&turn3);
        c.release(&turn3);
        assert_eq!(c.evictable(), 900);
        // Turn 1 (300 tokens) runs: it holds the first 300; the 600 behind stay free.
        let turn1 = [(0u32, 300u32)];
        assert_eq!(c.unheld_in(&turn1), 300);
        c.admit(&turn1, 288, 301);
        assert_eq!(c.held(), 300);
        assert_eq!(c.evictable(), 600);
        assert_eq!(c.evict(10_000), 600);
        assert_eq!(c.tokens(), 300);
        assert_eq!(c.lookup(&turn3, 901), 288);
        c.release(&turn1);
        assert_eq!(c.evictable(), 300);
    }

    #[test]
    fn eviction_takes_the_least_recently_released_and_the_tail_first() {
        let mut c = PrefixCache::new(4, 16, &[], &[]);
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
        assert_eq!(c.evicted(), 32 + 304 + 144);
    }

    #[test]
    fn a_pinned_prefix_is_cached_from_the_start_and_never_evicted() {
        let mut c = PrefixCache::new(1, 1, &[(0, 5000)], &[]);
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
