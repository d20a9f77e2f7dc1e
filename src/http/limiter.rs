//! Requests-per-minute and tokens-per-minute caps over a sliding 60-second window.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

const WINDOW: Duration = Duration::from_secs(60);

/// Waits until one more request (of an estimated token count) fits under both caps.
pub struct RateLimiter {
    rpm: Option<u32>,
    tpm: Option<u64>,
    /// The window the caps count over (a minute; shorter in tests, which run in real time).
    window: Duration,
    sent: Mutex<VecDeque<(Instant, u64)>>,
}

impl RateLimiter {
    pub fn new(rpm: Option<u32>, tpm: Option<u64>) -> RateLimiter {
        RateLimiter::over(rpm, tpm, WINDOW)
    }

    /// Caps over a window of `window` instead of a minute.
    fn over(rpm: Option<u32>, tpm: Option<u64>, window: Duration) -> RateLimiter {
        RateLimiter {
            rpm,
            tpm,
            window,
            sent: Mutex::new(VecDeque::new()),
        }
    }

    /// Returns when the request may go; records it as sent.
    pub async fn wait(&self, tokens: u64) {
        if self.rpm.is_none() && self.tpm.is_none() {
            return;
        }
        loop {
            let mut sent = self.sent.lock().await;
            let now = Instant::now();
            while sent
                .front()
                .is_some_and(|(t, _)| now.duration_since(*t) >= self.window)
            {
                sent.pop_front();
            }
            match self.delay(&sent, now, tokens) {
                None => {
                    sent.push_back((now, tokens));
                    return;
                }
                Some(d) => {
                    drop(sent);
                    tokio::time::sleep(d).await;
                }
            }
        }
    }

    /// How long until the oldest entries leave the window enough for this request.
    fn delay(
        &self,
        sent: &VecDeque<(Instant, u64)>,
        now: Instant,
        tokens: u64,
    ) -> Option<Duration> {
        let until = |idx: usize| {
            sent.get(idx)
                .map(|(t, _)| (*t + self.window).saturating_duration_since(now))
                .unwrap_or_default()
                .max(Duration::from_millis(1))
        };
        if let Some(rpm) = self.rpm
            && sent.len() >= rpm as usize
        {
            return Some(until(sent.len() - rpm as usize));
        }
        if let Some(tpm) = self.tpm {
            // A request larger than the whole budget goes alone once the window is empty.
            let need = tokens.min(tpm);
            let mut used: u64 = sent.iter().map(|(_, n)| n).sum();
            let mut i = 0;
            while used + need > tpm && i < sent.len() {
                used -= sent[i].1;
                i += 1;
            }
            if i > 0 {
                return Some(until(i - 1));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // In real time over a window of a second (long enough that a loaded machine does not
    // stall the first two requests past it): tokio's paused clock (its `test-util` feature) would
    // give the tests a tokio of their own features, compiled again with everything above it.
    const SHORT: Duration = Duration::from_secs(1);

    #[tokio::test]
    async fn rpm_spreads_requests_over_the_window() {
        let l = RateLimiter::over(Some(2), None, SHORT);
        let t0 = Instant::now();
        l.wait(1).await;
        l.wait(1).await;
        assert!(t0.elapsed() < SHORT);
        l.wait(1).await;
        assert!(t0.elapsed() >= SHORT, "{:?}", t0.elapsed());
    }

    #[tokio::test]
    async fn tpm_waits_for_tokens_to_leave_the_window() {
        let l = RateLimiter::over(None, Some(1000), SHORT);
        let t0 = Instant::now();
        l.wait(600).await;
        l.wait(300).await;
        assert!(t0.elapsed() < SHORT);
        l.wait(300).await;
        assert!(t0.elapsed() >= SHORT);
        // Larger than the budget: goes once the window is clear, never blocks forever.
        l.wait(5000).await;
        assert!(t0.elapsed() >= SHORT * 2);
    }
}
