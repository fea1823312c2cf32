import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

import { BSON } from 'mongodb';

/**
 * A TCP proxy in front of a MongoDB server that can lose the answer to a command after the server
 * has run it: the client sees its connection drop, as when a network fails at the worst moment.
 * It reads the wire protocol's OP_MSG just enough to name each command and its collection.
 */
export interface FaultProxy {
  /** `host:port` to put in a connection string in place of the server's. */
  address: string;
  /** Drops the connection instead of forwarding the answer to the next `count` commands `command` on `collection`. */
  loseAnswers(command: string, collection: string, count?: number): void;
  /** How many answers were lost so far. */
  lost(): number;
  close(): Promise<void>;
}

const opMsg = 2013;
const opReply = 1;

/** The command's name and its target (`{insert: "users"}`), from an OP_MSG's body section. */
function commandOf(message: Buffer): { name: string; target: string } | undefined {
  if (message.readInt32LE(12) !== opMsg || message[20] !== 0) return undefined;
  const document = 21;
  const type = message[document + 4];
  const nameEnd = message.indexOf(0, document + 5);
  const name = message.toString('utf8', document + 5, nameEnd);
  if (type !== 0x02) return { name, target: '' };
  const length = message.readInt32LE(nameEnd + 1);
  return { name, target: message.toString('utf8', nameEnd + 5, nameEnd + 5 + length - 1) };
}

/**
 * A server's `hello` answer names the replica set's members, and a driver connects to the members
 * it is told of: each mention of the server's address becomes the proxy's, so that the driver
 * keeps talking through the proxy (and still sees a replica set, which retries writes).
 */
function renamingMembers(message: Buffer, from: string, to: string): Buffer {
  if (!message.includes(from)) return message;
  // An OP_MSG's body section, or the document of an OP_REPLY (the answer to the first handshake).
  const opCode = message.readInt32LE(12);
  const start = opCode === opMsg && message[20] === 0 ? 21 : opCode === opReply ? 36 : undefined;
  if (start === undefined) return message;
  const length = message.readInt32LE(start);
  const document = BSON.deserialize(message.subarray(start, start + length));
  const rename = (value: unknown) => (value === from ? to : value);
  for (const key of ['me', 'primary']) if (key in document) document[key] = rename(document[key]);
  if (Array.isArray(document.hosts)) document.hosts = document.hosts.map(rename);
  const body = Buffer.from(BSON.serialize(document));
  const rebuilt = Buffer.concat([message.subarray(0, start), body, message.subarray(start + length)]);
  rebuilt.writeInt32LE(rebuilt.length, 0);
  return rebuilt;
}

/** Calls `onMessage` with each whole wire message that arrives on `socket`. */
function messages(socket: Socket, onMessage: (message: Buffer) => void) {
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
      const length = pending.readInt32LE(0);
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  });
}

export async function startFaultProxy(upstreamHost: string, upstreamPort: number): Promise<FaultProxy> {
  let armed: { command: string; collection: string; count: number } | undefined;
  const upstreamAddress = `${upstreamHost}:${upstreamPort}`;
  let proxyAddress = '';
  let lostAnswers = 0;
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = connect(upstreamPort, upstreamHost);
    sockets.add(client).add(upstream);
    const doomed = new Set<number>();
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);

    messages(client, (message) => {
      const command = commandOf(message);
      if (armed && armed.count > 0 && command?.name === armed.command && command.target === armed.collection) {
        armed.count -= 1;
        doomed.add(message.readInt32LE(4));
      }
      upstream.write(message);
    });
    messages(upstream, (message) => {
      if (doomed.has(message.readInt32LE(8))) {
        lostAnswers += 1;
        end();
        return;
      }
      client.write(renamingMembers(message, upstreamAddress, proxyAddress));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxyAddress = `127.0.0.1:${port}`;

  return {
    address: proxyAddress,
    loseAnswers(command, collection, count = 1) {
      armed = { command, collection, count };
    },
    lost: () => lostAnswers,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
