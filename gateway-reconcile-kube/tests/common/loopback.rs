//! A GET on loopback, for the controller's health and metrics endpoints: shared by the
//! stories of `common` and by the chart's (`helm`, which includes this file).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A GET on loopback: the status code and body (`None`: not listening yet).
pub fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let code = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    Some((code, body.to_owned()))
}

/// A GET on loopback: the status code (`None`: not listening yet).
pub fn http_status(addr: SocketAddr, path: &str) -> Option<u16> {
    http_get(addr, path).map(|(code, _)| code)
}
