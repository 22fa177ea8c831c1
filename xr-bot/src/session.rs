//! The bot session: created once, renewed while the bot lives (the server
//! reaps a session it has not heard from, and its leases go to other
//! bots), and re-created when the server answers that it no longer knows
//! it (BuildGrid says DATA_LOSS after a restart or an expiry).
//!
//! A lease arrives ACTIVE (BuildGrid) or PENDING (the API's first step,
//! acknowledged by setting it ACTIVE); its payload is the Action or the
//! Action's digest. While it runs, the session is renewed with the lease
//! still ACTIVE; when it ends, the lease goes back COMPLETED with the
//! ActionResult as its result.

use crate::run::{Runner, TYPE_PREFIX};
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::devtools::remoteworkers::v1test2::{
    BotSession, BotStatus, CreateBotSessionRequest, Device, LeaseState, UpdateBotSessionRequest, Worker,
    bots_client::BotsClient, device,
};
use prost::Message;
use std::{path::PathBuf, time::Duration};
use xr_remote_exec::{Connection, connection::AuthChannel};

/// How long the server may hold a renewal open while the bot waits for work.
const LONG_POLL: Duration = Duration::from_secs(10);
/// How often a bot with a running lease tells the server it is alive.
const KEEPALIVE: Duration = Duration::from_secs(2);

/// Serves leases until the process is stopped.
pub async fn serve(
    connection: Connection,
    id: String,
    properties: Vec<(String, String)>,
    work: PathBuf,
) -> anyhow::Result<()> {
    let mut bots = BotsClient::new(connection.channel())
        .max_decoding_message_size(xr_remote_exec::connection::MAX_MESSAGE)
        .max_encoding_message_size(xr_remote_exec::connection::MAX_MESSAGE);
    let runner = std::sync::Arc::new(Runner::new(&connection, work)?);
    let template = BotSession {
        bot_id: id.clone(),
        status: BotStatus::Ok as i32,
        worker: Some(Worker {
            devices: vec![Device {
                handle: id.clone(),
                properties: properties
                    .iter()
                    .map(|(k, v)| device::Property { key: k.clone(), value: v.clone() })
                    .collect(),
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let parent = connection.instance.clone();
    let mut session = create(&mut bots, &parent, &template).await;
    tracing::info!("bot {id} serving {} as {}", connection.shown, session.name);
    loop {
        let lease = session
            .leases
            .iter_mut()
            .find(|l| l.state == LeaseState::Pending as i32 || l.state == LeaseState::Active as i32);
        let Some(lease) = lease else {
            session = renew(&mut bots, &parent, &template, session, LONG_POLL).await;
            continue;
        };
        if lease.state == LeaseState::Pending as i32 {
            // Acknowledge, and start once the server has seen it taken.
            lease.state = LeaseState::Active as i32;
            session = renew(&mut bots, &parent, &template, session, KEEPALIVE).await;
            continue;
        }
        let lease_id = lease.id.clone();
        let payload = lease.payload.clone();
        tracing::info!("lease {lease_id}: running");
        let task = {
            let runner = runner.clone();
            tokio::spawn(async move { runner.run(payload).await })
        };
        tokio::pin!(task);
        let outcome = loop {
            tokio::select! {
                done = &mut task => break done,
                _ = tokio::time::sleep(KEEPALIVE) => {
                    session = renew(&mut bots, &parent, &template, session, KEEPALIVE).await;
                    // The server took it back (cancelled, or given to another bot after a lost session).
                    if !session.leases.iter().any(|l| l.id == lease_id && l.state == LeaseState::Active as i32) {
                        tracing::info!("lease {lease_id}: withdrawn by the server");
                        task.abort();
                        break Ok(Err(anyhow::anyhow!("withdrawn")));
                    }
                }
            }
        };
        let Some(lease) = session.leases.iter_mut().find(|l| l.id == lease_id) else { continue };
        match outcome {
            Ok(Ok((result, status))) => {
                tracing::info!("lease {lease_id}: exit {}", result.exit_code);
                lease.result = Some(prost_types::Any {
                    type_url: format!("{TYPE_PREFIX}build.bazel.remote.execution.v2.ActionResult"),
                    value: result.encode_to_vec(),
                });
                lease.status = Some(status);
            }
            Ok(Err(e)) => {
                tracing::warn!("lease {lease_id}: {e:#}");
                // The bot could not run it (the CAS lacked an input, the disk
                // is full): an error status, which the server passes on to
                // the client as a reason to try elsewhere.
                lease.status = Some(googleapis_tonic_google_devtools_remoteworkers_v1test2::google::rpc::Status {
                    code: tonic::Code::Internal as i32,
                    message: format!("{e:#}"),
                    details: Vec::new(),
                });
            }
            Err(join) => {
                tracing::warn!("lease {lease_id}: the run ended abnormally: {join}");
                continue;
            }
        }
        lease.state = LeaseState::Completed as i32;
        session = renew(&mut bots, &parent, &template, session, KEEPALIVE).await;
        // A server that keeps the finished lease in its answer: drop it here.
        session.leases.retain(|l| !(l.id == lease_id && l.state == LeaseState::Completed as i32));
    }
}

async fn create(bots: &mut BotsClient<AuthChannel>, parent: &str, template: &BotSession) -> BotSession {
    let mut pause = Duration::from_millis(200);
    loop {
        let mut request = tonic::Request::new(CreateBotSessionRequest {
            parent: parent.to_owned(),
            bot_session: Some(template.clone()),
        });
        request.set_timeout(KEEPALIVE * 2);
        match bots.create_bot_session(request).await {
            Ok(reply) => return reply.into_inner(),
            Err(status) => {
                tracing::warn!("creating the bot session: {:?}: {}", status.code(), status.message());
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Sends `session` (with its leases' states) and returns the server's
/// view; a session the server forgot is made again.
async fn renew(
    bots: &mut BotsClient<AuthChannel>,
    parent: &str,
    template: &BotSession,
    session: BotSession,
    wait: Duration,
) -> BotSession {
    let mut request = tonic::Request::new(UpdateBotSessionRequest {
        name: session.name.clone(),
        bot_session: Some(session.clone()),
        update_mask: None,
    });
    // BuildGrid holds an idle bot's renewal open for most of this, until work comes.
    request.set_timeout(wait + Duration::from_secs(2));
    match bots.update_bot_session(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => match status.code() {
            tonic::Code::DataLoss | tonic::Code::NotFound | tonic::Code::InvalidArgument => {
                tracing::warn!("the server forgot this bot ({}); starting a new session", status.message());
                create(bots, parent, template).await
            }
            tonic::Code::DeadlineExceeded => session,
            code => {
                tracing::warn!("renewing the bot session: {code:?}: {}", status.message());
                tokio::time::sleep(Duration::from_secs(1)).await;
                session
            }
        },
    }
}
