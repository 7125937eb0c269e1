import { existsSync } from 'node:fs';
import { EventBuffer } from './buffer.js';
import type { AgentConfig, Enabled } from './config.js';
import type { Logger } from './log.js';
import { Sender } from './sender.js';
import { authFileSource } from './sources/auth.js';
import { containerdSource, DOCKER_NAMESPACE } from './sources/containerd.js';
import { containersSource } from './sources/containers.js';
import { filesSource } from './sources/files.js';
import { firewallSource, firewallTool } from './sources/firewall.js';
import { heartbeatSource } from './sources/heartbeat.js';
import { journalSource } from './sources/journal.js';
import { logIntegritySource } from './sources/log-integrity.js';
import { modulesSource } from './sources/modules.js';
import { packagesSource } from './sources/packages.js';
import { portsSource } from './sources/ports.js';
import { processesSource } from './sources/processes.js';
import type { Source, SourceContext } from './sources/source.js';
import { commandExists } from './util/exec.js';

const on = (enabled: Enabled, present: () => boolean): boolean => enabled === true || (enabled === 'auto' && present());

/** The sources this host runs: those enabled, and for `auto` those whose input exists here. */
export function chooseSources(ctx: SourceContext): Source[] {
  const s = ctx.config.sources;
  const anyExists = (paths: readonly string[]) => paths.some((p) => existsSync(p));
  const out: Source[] = [];
  const authFiles = on(s.auth.enabled, () => anyExists(s.auth.paths));
  if (authFiles) out.push(authFileSource(ctx));
  // The journal is read only where no auth log file is followed: rsyslog copies the journal into those files.
  if (on(s.journal.enabled, () => !authFiles && commandExists(s.journal.command))) out.push(journalSource(ctx));
  if (on(s.packages.enabled, () => anyExists(s.packages.paths))) out.push(packagesSource(ctx));
  if (on(s.log_integrity.enabled, () => anyExists(s.log_integrity.paths))) out.push(logIntegritySource(ctx));
  if (on(s.files.enabled, () => true)) out.push(filesSource(ctx));
  if (on(s.ports.enabled, () => existsSync(`${s.ports.proc_net}/tcp`))) out.push(portsSource(ctx));
  if (on(s.modules.enabled, () => existsSync(s.modules.proc_modules))) out.push(modulesSource(ctx));
  if (on(s.firewall.enabled, () => firewallTool() !== undefined)) out.push(firewallSource(ctx));
  if (on(s.processes.enabled, () => existsSync(`${s.processes.proc}/self/cmdline`))) out.push(processesSource(ctx));
  const docker = on(s.containers.enabled, () => anyExists(s.containers.sockets));
  if (docker) out.push(containersSource(ctx));
  // Docker runs its containers in containerd's "moby" namespace: those come from the Docker source.
  const containerd = s.containers.containerd_sockets.find((p) => existsSync(p));
  if (containerd !== undefined && s.containers.enabled !== false && commandExists(s.containers.ctr_command))
    out.push(containerdSource(ctx, containerd, docker ? [DOCKER_NAMESPACE] : []));
  return out;
}

/** The running agent: buffer, sources, heartbeat, sender; `stop` leaves every unsent event in the buffer. */
export class Agent {
  readonly buffer: EventBuffer;
  private readonly sender: Sender;
  private readonly sources: Source[];

  constructor(
    readonly config: AgentConfig,
    private readonly log: Logger,
  ) {
    this.buffer = new EventBuffer(config.buffer.path, config.buffer.max_events, false, config.redact);
    const ctx: SourceContext = { config, host: config.host, buffer: this.buffer, log };
    this.sources = chooseSources(ctx);
    if (config.heartbeat.enabled) this.sources.push(heartbeatSource(ctx, () => this.sources.map((s) => s.name)));
    this.sender = new Sender(
      this.buffer,
      {
        server: config.server,
        key: config.key,
        batchSize: config.sender.batch_size,
        backoffBaseMs: config.sender.backoff_base_ms,
        backoffMaxMs: config.sender.backoff_max_ms,
        requestTimeoutMs: config.sender.request_timeout_ms,
        idlePollMs: config.sender.idle_poll_ms,
      },
      log,
    );
  }

  async start(): Promise<void> {
    for (const s of this.sources) await s.start();
    this.sender.start();
    this.log.info('vigil-agent running', {
      host: this.config.host,
      server: this.config.server,
      sources: this.sources.map((s) => s.name),
      buffer: this.config.buffer.path,
      pending: this.buffer.depth,
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sources) await s.stop();
    await this.sender.stop();
    this.buffer.close();
    this.log.info('vigil-agent stopped');
  }
}
