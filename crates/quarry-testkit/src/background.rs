//! An axum app served on `127.0.0.1` on a free port, on its own thread and runtime (so sync and
//! async tests alike can use it), stopped when dropped.

use std::net::{SocketAddr, TcpListener};
use std::thread::JoinHandle;

use axum::Router;
use tokio::sync::oneshot;

pub(crate) struct Background {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    pub(crate) fn serve(name: &str, app: Router) -> Background {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("set the listener non-blocking");
        let addr = listener
            .local_addr()
            .expect("local address of the listener");
        let (shutdown, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("{name}-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("build the server runtime");
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)
                        .expect("hand the listener to tokio");
                    tokio::select! {
                        result = axum::serve(listener, app).into_future() => {
                            result.expect("the test server failed");
                        }
                        _ = stopped => {}
                    }
                });
                // Connections still open (a client mid-stream) are dropped, not waited for.
                runtime.shutdown_background();
            })
            .expect("spawn the server thread");
        Background {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
