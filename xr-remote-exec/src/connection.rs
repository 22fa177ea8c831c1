//! Where a farm is and how to talk to it: `grpc://HOST:PORT` (plain, as a
//! farm on loopback or a trusted network listens) or `grpcs://HOST:PORT`
//! (TLS, checked against the system's roots), an instance name, and an
//! `authorization` header sent with every call when the team's server
//! wants one.

use base64::Engine as _;
use std::time::Duration;
use tonic::{
    Request, Status,
    metadata::MetadataValue,
    service::{Interceptor, interceptor::InterceptedService},
    transport::{Channel, ClientTlsConfig},
};

/// The largest message this client sends or accepts: a batch of blobs
/// (the CAS caps batches far lower, see [`crate::cas`]) or a reply with an
/// artifact inline.
pub const MAX_MESSAGE: usize = 64 << 20;

/// A farm's address, as given to `--remote-exec`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://` or `https://` and the authority: what the channel dials.
    uri: String,
    /// Whether TLS is used.
    pub tls: bool,
    /// The URL as given, without any password, for messages.
    pub shown: String,
    /// A user and password written in the URL, if any.
    pub userinfo: Option<(String, String)>,
}

/// A `--remote-exec` value that is not a farm's address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Not a URL.
    #[error("'{0}' is not a URL: write grpc://HOST:PORT or grpcs://HOST:PORT")]
    NotAUrl(String),
    /// A scheme other than grpc or grpcs.
    #[error("'{0}': the remote executor's URL must start with grpc:// (plain) or grpcs:// (TLS)")]
    Scheme(String),
    /// No host or no port.
    #[error("'{0}' names no host and port: write grpc://HOST:PORT")]
    NoHost(String),
}

impl Endpoint {
    /// Parses `grpc://HOST:PORT` or `grpcs://HOST:PORT`.
    pub fn parse(text: &str) -> Result<Self, EndpointError> {
        let url = url::Url::parse(text).map_err(|_| EndpointError::NotAUrl(text.to_owned()))?;
        let (tls, default_port) = match url.scheme() {
            "grpc" => (false, None),
            "grpcs" => (true, Some(443)),
            _ => return Err(EndpointError::Scheme(text.to_owned())),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| EndpointError::NoHost(text.to_owned()))?;
        let port = url.port().or(default_port).ok_or_else(|| EndpointError::NoHost(text.to_owned()))?;
        let userinfo = url.password().map(|p| (url.username().to_owned(), p.to_owned()));
        let scheme = if tls { "https" } else { "http" };
        let shown = format!("{}://{host}:{port}", url.scheme());
        Ok(Self { uri: format!("{scheme}://{host}:{port}"), tls, shown, userinfo })
    }
}

/// Why a channel could not be set up (before anything is dialled).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The endpoint does not make a URI.
    #[error("'{0}' does not make a URI")]
    Uri(String),
    /// The TLS configuration failed (no system roots).
    #[error("setting up TLS: {0}")]
    Tls(#[from] tonic::transport::Error),
}

/// An open channel to a farm, and what every call carries.
///
/// The channel is made on first use, which must be inside a Tokio runtime
/// (the executor's, the bot's): it dials on the runtime's reactor.
#[derive(Clone)]
pub struct Connection {
    endpoint: tonic::transport::Endpoint,
    auth: Auth,
    channel: std::sync::Arc<std::sync::OnceLock<Channel>>,
    /// The REAPI instance every request names (often empty).
    pub instance: String,
    /// Where it goes, for messages.
    pub shown: String,
}

/// Adds the `authorization` header, when there is one, to every call.
#[derive(Clone)]
pub struct Auth(Option<MetadataValue<tonic::metadata::Ascii>>);

impl Interceptor for Auth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// The channel type every generated client of this crate wraps.
pub type AuthChannel = InterceptedService<Channel, Auth>;

impl Connection {
    /// A channel to `endpoint` (dialled lazily: the first call finds out
    /// whether the farm is there), with HTTP basic credentials `login`
    /// (user, password) or a bearer `token`.
    pub fn open(
        endpoint: &Endpoint,
        instance: &str,
        login: Option<(String, String)>,
        token: Option<String>,
    ) -> Result<Self, ConnectError> {
        let mut builder = Channel::from_shared(endpoint.uri.clone())
            .map_err(|_| ConnectError::Uri(endpoint.shown.clone()))?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30));
        if endpoint.tls {
            builder = builder.tls_config(ClientTlsConfig::new().with_native_roots())?;
        }
        let header = match (token, login.or_else(|| endpoint.userinfo.clone())) {
            (Some(token), _) => Some(format!("Bearer {token}")),
            (None, Some((user, password))) => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            )),
            (None, None) => None,
        };
        let header = header.and_then(|h| h.parse().ok());
        Ok(Self {
            endpoint: builder,
            auth: Auth(header),
            channel: Default::default(),
            instance: instance.to_owned(),
            shown: endpoint.shown.clone(),
        })
    }

    /// The channel, for a generated client; called inside a Tokio runtime.
    pub fn channel(&self) -> AuthChannel {
        let channel = self.channel.get_or_init(|| self.endpoint.connect_lazy()).clone();
        InterceptedService::new(channel, self.auth.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_scheme_a_host_and_a_port() {
        let plain = Endpoint::parse("grpc://127.0.0.1:50071").unwrap();
        assert_eq!((plain.uri.as_str(), plain.tls), ("http://127.0.0.1:50071", false));
        let tls = Endpoint::parse("grpcs://farm.example:8980").unwrap();
        assert_eq!((tls.uri.as_str(), tls.tls), ("https://farm.example:8980", true));
        assert_eq!(Endpoint::parse("grpcs://farm.example").unwrap().uri, "https://farm.example:443");
        let secret = Endpoint::parse("grpc://ci:hunter2@farm:1").unwrap();
        assert_eq!(secret.userinfo, Some(("ci".into(), "hunter2".into())));
        assert!(!secret.shown.contains("hunter2"), "messages never show a password");
        assert!(matches!(Endpoint::parse("http://farm:1"), Err(EndpointError::Scheme(_))));
        assert!(matches!(Endpoint::parse("grpc://farm"), Err(EndpointError::NoHost(_))));
        assert!(matches!(Endpoint::parse("farm:1"), Err(EndpointError::Scheme(_) | EndpointError::NotAUrl(_))));
    }
}
