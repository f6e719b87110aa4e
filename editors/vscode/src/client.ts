/**
 * The extension's connection to the indexd daemon: JSON-RPC 2.0 over the daemon's
 * Unix socket with LSP framing (Content-Length headers), through vscode-jsonrpc.
 *
 * This module must NOT import 'vscode': node runs its tests against the real daemon
 * (editors/vscode/test/), where no editor exists. It imports node's `net` and
 * vscode-jsonrpc only, and the build bundles vscode-jsonrpc into out/client.js so the
 * tests need no node_modules.
 *
 * Errors (every failure is one of these, never a bare Error):
 *
 *   IndexdError          base: `code` (JSON-RPC code), `retryable`
 *   ├── DaemonNotRunning   no socket, or nothing listens on it
 *   ├── ConnectionLost     the daemon closed the connection or it broke
 *   ├── RequestTimeout     no answer within the request's timeout
 *   └── RemoteError        the daemon answered with an error (`data.type`: its class)
 */
import * as net from "net";
import * as path from "path";
import { createMessageConnection, MessageConnection, ResponseError, SocketMessageReader,
         SocketMessageWriter } from "vscode-jsonrpc/node";

export const NOT_RUNNING = "indexd is not running: start it with indexd run";

export class IndexdError extends Error {
  readonly code: number;
  readonly retryable: boolean;
  readonly data: unknown;

  constructor(message: string, code: number, retryable: boolean, data: unknown = undefined) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
    this.data = data;
  }
}

// The client-side codes are indexd/errors.py's (DaemonNotRunning -32010, ...).
export class DaemonNotRunning extends IndexdError {
  constructor(message: string, data?: unknown) { super(message, -32010, true, data); }
}
export class ConnectionLost extends IndexdError {
  constructor(message: string) { super(message, -32011, true); }
}
export class RequestTimeout extends IndexdError {
  constructor(message: string) { super(message, -32012, true); }
}
export class RemoteError extends IndexdError {}

type Env = Record<string, string | undefined>;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

// Python's Path(p).expanduser().absolute(): "~" expanded, made absolute against the
// current directory, "." parts and doubled slashes dropped, ".." and links kept (the
// daemon does not resolve them either, so the two agree on the socket's name).
function pyAbsolute(p: string, env: Env, cwd: string): string {
  const home = nonEmpty(env.HOME);
  if (home && (p === "~" || p.startsWith("~/"))) {
    p = home + p.slice(1);
  }
  if (!path.isAbsolute(p)) {
    p = cwd + "/" + p;
  }
  return pyNormal(p);
}

function pyNormal(p: string): string {
  const parts = p.split("/").filter((part) => part !== "" && part !== ".");
  return "/" + parts.join("/");
}

/**
 * The daemon's socket, as `indexd paths` prints it (indexd/config.py default_paths):
 * $INDEXD_HOME/indexd.sock, else $XDG_RUNTIME_DIR/indexd/indexd.sock, else
 * /tmp/indexd-$UID/indexd.sock.
 */
export function socketPath(env: Env = process.env, uid: number = process.getuid!(),
                           cwd: string = process.cwd()): string {
  const home = nonEmpty(env.INDEXD_HOME);
  if (home) {
    return pyAbsolute(home, env, cwd) + "/indexd.sock";
  }
  const runtime = nonEmpty(env.XDG_RUNTIME_DIR);
  if (runtime) {
    return pyNormal(path.isAbsolute(runtime) ? runtime : cwd + "/" + runtime)
      + "/indexd/indexd.sock";
  }
  return `/tmp/indexd-${uid}/indexd.sock`;
}

export interface ConnectOptions {
  /** The socket; default socketPath(). */
  socket?: string;
  /** Milliseconds a request waits for its answer (default 10000). */
  timeoutMs?: number;
  /** Milliseconds connecting may take (default timeoutMs). */
  connectTimeoutMs?: number;
}

function connectError(socket: string, err: NodeJS.ErrnoException): IndexdError {
  // ENOENT: no socket; ECONNREFUSED: a socket left behind by a daemon that died.
  if (err.code === "ENOENT" || err.code === "ECONNREFUSED") {
    return new DaemonNotRunning(`${NOT_RUNNING} (no daemon at ${socket})`, { path: socket });
  }
  return new ConnectionLost(`indexd: cannot connect to ${socket}: ${err.message}`);
}

function openSocket(socket: string, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socket);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new RequestTimeout(`indexd: connecting to ${socket} took over ${seconds(timeoutMs)} s`));
    }, timeoutMs);
    sock.once("connect", () => {
      clearTimeout(timer);
      sock.removeAllListeners("error");
      resolve(sock);
    });
    sock.once("error", (err) => {
      clearTimeout(timer);
      sock.destroy();
      reject(connectError(socket, err));
    });
  });
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

function remoteError(err: unknown): IndexdError {
  if (err instanceof IndexdError) {
    return err;
  }
  if (err instanceof ResponseError) {
    const data = err.data as { retryable?: boolean } | undefined;
    return new RemoteError(`indexd: ${err.message}`, err.code, Boolean(data?.retryable), err.data);
  }
  return new ConnectionLost(`indexd: ${err instanceof Error ? err.message : String(err)}`);
}

export type Params = Record<string, unknown>;
export type StatusHandler = (status: Record<string, unknown>) => void;

/** One connection to the daemon. Requests may overlap; each has its own timeout. */
export class IndexdClient {
  readonly socket: string;
  readonly timeoutMs: number;
  private closedReason: string | undefined;
  private readonly pending = new Set<(err: IndexdError) => void>();
  private readonly closeHandlers: Array<(reason: string) => void> = [];

  private constructor(private readonly conn: MessageConnection, private readonly sock: net.Socket,
                      socket: string, timeoutMs: number) {
    this.socket = socket;
    this.timeoutMs = timeoutMs;
    conn.onClose(() => this.lost("indexd closed the connection"));
    conn.onError(([err]) => this.lost(`indexd: connection lost: ${err.message}`));
    sock.on("error", (err) => this.lost(`indexd: connection lost: ${err.message}`));
  }

  /** Connect; rejects with DaemonNotRunning when no daemon listens there. */
  static async connect(options: ConnectOptions = {}): Promise<IndexdClient> {
    const socket = options.socket ?? socketPath();
    const timeoutMs = options.timeoutMs ?? 10000;
    const sock = await openSocket(socket, options.connectTimeoutMs ?? timeoutMs);
    // The first byte the daemon sees is "C" (of Content-Length), so it answers in
    // LSP framing too (docs/protocol.md).
    const conn = createMessageConnection(new SocketMessageReader(sock), new SocketMessageWriter(sock));
    conn.listen();
    return new IndexdClient(conn, sock, socket, timeoutMs);
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /** Calls `handler(reason)` once, when the connection ends for any reason. */
  onClose(handler: (reason: string) => void): void {
    if (this.closedReason !== undefined) {
      handler(this.closedReason);
    } else {
      this.closeHandlers.push(handler);
    }
  }

  /**
   * Any method of docs/protocol.md. Rejects with RequestTimeout after `timeoutMs`;
   * a late answer is matched to its own (abandoned) id by vscode-jsonrpc and dropped,
   * never taken for a later request's.
   */
  request<T = Record<string, unknown>>(method: string, params: Params = {},
                                       timeoutMs: number = this.timeoutMs): Promise<T> {
    if (this.closedReason !== undefined) {
      return Promise.reject(new ConnectionLost(this.closedReason));
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (err: IndexdError) => { settle(); reject(err); };
      const timer = setTimeout(() => {
        fail(new RequestTimeout(`indexd did not answer ${method} within ${seconds(timeoutMs)} s`));
      }, timeoutMs);
      const settle = () => { clearTimeout(timer); this.pending.delete(fail); };
      this.pending.add(fail);
      this.conn.sendRequest<T>(method, dropUndefined(params)).then(
        (result) => { settle(); resolve(result); },
        (err) => fail(remoteError(err)));
    });
  }

  /** Subscribe to `status` notifications (one after each indexing batch). */
  async subscribe(handler: StatusHandler): Promise<void> {
    this.conn.onNotification("status", (params: Record<string, unknown>) => handler(params));
    await this.request("subscribe");
  }

  close(): void {
    this.lost("indexd: connection closed");
  }

  private lost(reason: string): void {
    if (this.closedReason !== undefined) {
      return;
    }
    this.closedReason = reason;
    for (const fail of [...this.pending]) {
      fail(new ConnectionLost(reason));
    }
    this.conn.dispose();
    this.sock.destroy();
    for (const handler of this.closeHandlers.splice(0)) {
      handler(reason);
    }
  }
}

// An option left unset is not sent, so the daemon applies its own default.
function dropUndefined(params: Params): Params {
  const out: Params = {};
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

export interface StatusView {
  /** The last figures heard (state, pending, index_lag_s, generation, paused, error). */
  status?: Record<string, unknown>;
  /** Why the daemon cannot be reached right now; unset while connected. */
  down?: string;
}

export interface WatchOptions extends ConnectOptions {
  /** Retry a lost daemon this often (milliseconds, default 2000). */
  reconnectMs?: number;
}

/**
 * The status bar's feed: a connection of its own subscribed to `status`, so showing
 * the figures never waits on the socket. A lost daemon (a restart, an upgrade) is
 * retried every reconnectMs until it is back; `onChange` gets every change.
 */
export class StatusWatcher {
  private client: IndexdClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  view: StatusView = {};

  constructor(private readonly options: WatchOptions, private readonly onChange: (view: StatusView) => void) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.client?.close();
    this.client = undefined;
  }

  private keep(status: Record<string, unknown>): void {
    const { state, pending, index_lag_s, generation, paused, error } = status;
    this.view = { status: { state, pending, index_lag_s, generation, paused, error } };
    this.onChange(this.view);
  }

  private retryLater(reason: string): void {
    this.client = undefined;
    if (this.stopped) {
      return;
    }
    if (this.view.down !== reason) {
      this.view = { down: reason };
      this.onChange(this.view);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), this.options.reconnectMs ?? 2000);
  }

  private async connect(): Promise<void> {
    let client: IndexdClient;
    try {
      client = await IndexdClient.connect(this.options);
    } catch (err) {
      return this.retryLater((err as Error).message);
    }
    if (this.stopped) {
      return client.close();
    }
    this.client = client;
    client.onClose((reason) => { if (this.client === client) { this.retryLater(reason); } });
    try {
      await client.subscribe((status) => this.keep(status));
      // The first notification comes with the next batch: the current figures now.
      this.keep(await client.request("status"));
    } catch {
      client.close();
    }
  }
}
