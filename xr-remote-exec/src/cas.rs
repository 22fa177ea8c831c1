//! The content-addressable store of a farm: which blobs it lacks, sending
//! them (small ones in batches, large ones streamed over ByteStream, as
//! the API asks for anything over the server's batch limit) and reading
//! them back, each checked against its digest.

use crate::{
    connection::{AuthChannel, Connection},
    digest, proto,
};
use bazel_remote_apis::google::bytestream::{ReadRequest, WriteRequest, byte_stream_client::ByteStreamClient};
use proto::content_addressable_storage_client::ContentAddressableStorageClient;
use std::collections::HashMap;

/// Blobs up to this size go in batches; larger ones are streamed. Kept
/// under the 4 MiB most servers allow per message (BuildGrid, Buildbarn).
pub const BATCH_LIMIT: usize = 2 << 20;
/// The size of each ByteStream chunk.
const CHUNK: usize = 1 << 20;

/// Why the CAS could not give or take a blob.
#[derive(Debug, thiserror::Error)]
pub enum CasError {
    /// The call failed (the farm down, refusing, or the stream broken).
    #[error("{call}: {status}")]
    Rpc {
        /// Which call.
        call: &'static str,
        /// The server's or the transport's status.
        status: Box<tonic::Status>,
    },
    /// The server answered, but without the blob, or for one blob with an error.
    #[error("the farm's CAS has no blob {0}")]
    Missing(String),
    /// The bytes it sent are not the blob asked for.
    #[error("the farm's CAS sent bytes that do not match blob {0}")]
    Mismatch(String),
}

impl CasError {
    fn rpc(call: &'static str) -> impl FnOnce(tonic::Status) -> Self {
        move |status| CasError::Rpc { call, status: Box::new(status) }
    }
}

/// Whether a gRPC status is one REAPI clients retry.
pub fn is_transient(code: tonic::Code) -> bool {
    use tonic::Code::*;
    matches!(code, Unavailable | Unknown | Internal | Aborted | DeadlineExceeded | ResourceExhausted | Cancelled)
}

/// A farm's CAS.
#[derive(Clone)]
pub struct Cas {
    cas: ContentAddressableStorageClient<AuthChannel>,
    bytestream: ByteStreamClient<AuthChannel>,
    instance: String,
}

impl Cas {
    /// The CAS of `connection`.
    pub fn new(connection: &Connection) -> Self {
        let limit = crate::connection::MAX_MESSAGE;
        Self {
            cas: ContentAddressableStorageClient::new(connection.channel())
                .max_decoding_message_size(limit)
                .max_encoding_message_size(limit),
            bytestream: ByteStreamClient::new(connection.channel())
                .max_decoding_message_size(limit)
                .max_encoding_message_size(limit),
            instance: connection.instance.clone(),
        }
    }

    /// Which of `digests` the CAS lacks.
    pub async fn missing(&self, digests: Vec<proto::Digest>) -> Result<Vec<proto::Digest>, CasError> {
        let mut missing = Vec::new();
        // A request per few thousand digests stays well under any message limit.
        for chunk in digests.chunks(4096) {
            let request = proto::FindMissingBlobsRequest {
                instance_name: self.instance.clone(),
                blob_digests: chunk.to_vec(),
                ..Default::default()
            };
            let reply =
                self.cas.clone().find_missing_blobs(request).await.map_err(CasError::rpc("FindMissingBlobs"))?;
            missing.extend(reply.into_inner().missing_blob_digests);
        }
        Ok(missing)
    }

    /// Sends `blobs` (digest, bytes): small ones in batches, large ones streamed.
    pub async fn upload(&self, blobs: Vec<(proto::Digest, Vec<u8>)>) -> Result<(), CasError> {
        let mut batch = Vec::new();
        let mut batch_size = 0;
        for (digest, data) in blobs {
            if data.len() > BATCH_LIMIT {
                self.write(digest, data).await?;
                continue;
            }
            if batch_size + data.len() > BATCH_LIMIT {
                self.batch_update(std::mem::take(&mut batch)).await?;
                batch_size = 0;
            }
            batch_size += data.len();
            batch.push(proto::batch_update_blobs_request::Request { digest: Some(digest), data, ..Default::default() });
        }
        if !batch.is_empty() {
            self.batch_update(batch).await?;
        }
        Ok(())
    }

    async fn batch_update(&self, requests: Vec<proto::batch_update_blobs_request::Request>) -> Result<(), CasError> {
        let request =
            proto::BatchUpdateBlobsRequest { instance_name: self.instance.clone(), requests, ..Default::default() };
        let reply = self.cas.clone().batch_update_blobs(request).await.map_err(CasError::rpc("BatchUpdateBlobs"))?;
        for response in reply.into_inner().responses {
            if let Some(status) = response.status.filter(|s| s.code != 0) {
                let code = tonic::Code::from(status.code);
                return Err(CasError::Rpc {
                    call: "BatchUpdateBlobs",
                    status: Box::new(tonic::Status::new(code, status.message)),
                });
            }
        }
        Ok(())
    }

    async fn write(&self, digest: proto::Digest, data: Vec<u8>) -> Result<(), CasError> {
        let name = format!(
            "{}uploads/{}/blobs/{}/{}",
            instance_prefix(&self.instance),
            uuid::Uuid::new_v4(),
            digest.hash,
            digest.size_bytes
        );
        let total = data.len();
        let chunks: Vec<WriteRequest> = (0..total.div_ceil(CHUNK).max(1))
            .map(|i| {
                let start = i * CHUNK;
                let end = (start + CHUNK).min(total);
                WriteRequest {
                    resource_name: if i == 0 { name.clone() } else { String::new() },
                    write_offset: start as i64,
                    finish_write: end == total,
                    data: data[start..end].to_vec(),
                }
            })
            .collect();
        let reply = self
            .bytestream
            .clone()
            .write(tokio_stream::iter(chunks))
            .await
            .map_err(CasError::rpc("ByteStream.Write"))?;
        let committed = reply.into_inner().committed_size;
        // A server that already had the blob may answer with its size early.
        if committed != total as i64 && committed != -1 {
            return Err(CasError::Rpc {
                call: "ByteStream.Write",
                status: Box::new(tonic::Status::data_loss(format!("committed {committed} of {total} bytes"))),
            });
        }
        Ok(())
    }

    /// Reads the blobs `digests`, each checked against its digest.
    pub async fn download(&self, digests: &[proto::Digest]) -> Result<HashMap<String, Vec<u8>>, CasError> {
        let mut blobs = HashMap::new();
        let mut batch: Vec<proto::Digest> = Vec::new();
        let mut batch_size = 0i64;
        for d in digests {
            if !digest::is_well_formed(d) {
                return Err(CasError::Missing(digest::text(d)));
            }
            if d.size_bytes == 0 {
                blobs.insert(d.hash.clone(), Vec::new());
            } else if d.size_bytes as usize > BATCH_LIMIT {
                let bytes = self.read(d).await?;
                blobs.insert(d.hash.clone(), bytes);
            } else {
                if batch_size + d.size_bytes > BATCH_LIMIT as i64 {
                    self.batch_read(std::mem::take(&mut batch), &mut blobs).await?;
                    batch_size = 0;
                }
                batch_size += d.size_bytes;
                batch.push(d.clone());
            }
        }
        if !batch.is_empty() {
            self.batch_read(batch, &mut blobs).await?;
        }
        Ok(blobs)
    }

    async fn batch_read(
        &self,
        digests: Vec<proto::Digest>,
        into: &mut HashMap<String, Vec<u8>>,
    ) -> Result<(), CasError> {
        let request = proto::BatchReadBlobsRequest {
            instance_name: self.instance.clone(),
            digests: digests.clone(),
            ..Default::default()
        };
        let reply = self.cas.clone().batch_read_blobs(request).await.map_err(CasError::rpc("BatchReadBlobs"))?;
        let mut got: HashMap<String, Vec<u8>> = HashMap::new();
        for response in reply.into_inner().responses {
            if response.status.as_ref().is_some_and(|s| s.code != 0) {
                continue;
            }
            if let Some(d) = response.digest {
                got.insert(d.hash, response.data);
            }
        }
        for d in digests {
            let bytes = got.remove(&d.hash).ok_or_else(|| CasError::Missing(digest::text(&d)))?;
            if !digest::matches(&d, &bytes) {
                return Err(CasError::Mismatch(digest::text(&d)));
            }
            into.insert(d.hash, bytes);
        }
        Ok(())
    }

    async fn read(&self, d: &proto::Digest) -> Result<Vec<u8>, CasError> {
        let request = ReadRequest {
            resource_name: format!("{}blobs/{}/{}", instance_prefix(&self.instance), d.hash, d.size_bytes),
            read_offset: 0,
            read_limit: 0,
        };
        let mut stream =
            self.bytestream.clone().read(request).await.map_err(CasError::rpc("ByteStream.Read"))?.into_inner();
        let mut bytes = Vec::with_capacity(d.size_bytes as usize);
        while let Some(chunk) = stream.message().await.map_err(CasError::rpc("ByteStream.Read"))? {
            bytes.extend_from_slice(&chunk.data);
            if bytes.len() as i64 > d.size_bytes {
                return Err(CasError::Mismatch(digest::text(d)));
            }
        }
        if !digest::matches(d, &bytes) {
            return Err(CasError::Mismatch(digest::text(d)));
        }
        Ok(bytes)
    }
}

/// `INSTANCE/`, or nothing for the default instance: how resource names start.
fn instance_prefix(instance: &str) -> String {
    if instance.is_empty() { String::new() } else { format!("{instance}/") }
}
