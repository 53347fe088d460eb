//! A streamed reply whose events come from work run by the connection's own task.
//!
//! `POST /v1/chat` answers with the events of a turn (the model's tokens, the result, the
//! reply). Running the turn in a task of its own would hand every event across threads and wake
//! the connection for each; here the response body polls the turn itself, so events produced
//! together are written together. A turn must still end even when its client goes away (its
//! conversation is written at the end), so a body dropped before its turn finished hands the
//! turn to a task of its own.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use tokio::sync::mpsc;

type Work = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The events `work` sends into its channel, ending when `work` has finished (and dropped its
/// senders) and every event was read.
pub(crate) struct TurnEvents<E> {
    events: mpsc::UnboundedReceiver<E>,
    work: Option<Work>,
}

impl<E> TurnEvents<E> {
    /// `work` owns the senders of `events`.
    pub(crate) fn new(
        events: mpsc::UnboundedReceiver<E>,
        work: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        TurnEvents {
            events,
            work: Some(Box::pin(work)),
        }
    }
}

impl<E> Stream for TurnEvents<E> {
    type Item = Result<E, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        // Run the work until it waits; what it sent meanwhile is read below.
        if let Some(work) = &mut this.work
            && work.as_mut().poll(cx).is_ready()
        {
            // Dropping the finished work drops its senders: the channel ends after its events.
            this.work = None;
        }
        this.events.poll_recv(cx).map(|event| event.map(Ok))
    }
}

impl<E> Drop for TurnEvents<E> {
    fn drop(&mut self) {
        if let Some(work) = self.work.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(work);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn every_event_is_read_in_order_and_the_stream_ends_with_the_work() {
        let (sender, receiver) = mpsc::unbounded_channel();
        let stream = TurnEvents::new(receiver, async move {
            sender.send(1).unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
            sender.send(2).unwrap();
            sender.send(3).unwrap();
        });
        let events: Vec<i32> = stream.map(|event| event.unwrap()).collect().await;
        assert_eq!(events, [1, 2, 3]);
    }

    #[tokio::test]
    async fn work_left_by_a_dropped_stream_still_finishes() {
        let (sender, receiver) = mpsc::unbounded_channel::<()>();
        let (finished_tx, finished_rx) = tokio::sync::oneshot::channel();
        let started = Arc::new(AtomicBool::new(false));
        let mut stream = Box::pin(TurnEvents::new(receiver, {
            let started = started.clone();
            async move {
                started.store(true, Ordering::SeqCst);
                sender.send(()).unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
                let _ = finished_tx.send(());
            }
        }));
        // The first event arrives; the client goes away while the work still waits.
        stream.next().await.unwrap().unwrap();
        assert!(started.load(Ordering::SeqCst));
        drop(stream);
        tokio::time::timeout(Duration::from_secs(10), finished_rx)
            .await
            .expect("the work finished in a task of its own")
            .expect("the work ran to its end");
    }
}
