import type { Collection, Db } from 'mongodb';
import type { Adapter, AdapterConstructor, AdapterFactory, AdapterPayload } from 'oidc-provider';

import { systemClock, type Clock } from '../lib/clock.js';
import { grantableModels, providerCollection } from './collections.js';

/**
 * A stored provider model. The payload is kept as JSON text: it carries request
 * parameters and claims whose keys we do not control (`$`-prefixed or dotted keys
 * would be refused or misread by MongoDB), and we only ever look it up by the
 * fields lifted out beside it.
 */
interface StoredModel {
  _id: string;
  payload: string;
  expiresAt?: Date;
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumed?: number;
  /** A session's last save: the last time the browser holding it was at the provider. */
  savedAt?: Date;
}

export type ClientFinder = (id: string) => Promise<AdapterPayload | undefined>;

/** Expiry is checked on every read too: a TTL index removes documents up to a minute late, or (some engines) never. */
const live = (now: Date) => ({ $or: [{ expiresAt: { $exists: false } }, { expiresAt: { $gt: now } }] });

class MongoModelAdapter implements Adapter {
  readonly #collection: Collection<StoredModel>;
  readonly #grantable: boolean;
  readonly #session: boolean;
  readonly #clock: Clock;

  constructor(db: Db, model: string, clock: Clock) {
    this.#collection = db.collection<StoredModel>(providerCollection(model));
    this.#grantable = grantableModels.has(model);
    this.#session = model === 'Session';
    this.#clock = clock;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const document: Omit<StoredModel, '_id'> = { payload: JSON.stringify(payload) };
    if (typeof expiresIn === 'number') document.expiresAt = new Date(this.#clock.now().getTime() + expiresIn * 1000);
    if (this.#grantable && payload.grantId) document.grantId = payload.grantId;
    if (payload.uid) document.uid = payload.uid;
    if (payload.userCode) document.userCode = payload.userCode;
    if (typeof payload.accountId === 'string') document.accountId = payload.accountId;
    if (this.#session) document.savedAt = this.#clock.now();
    await this.#collection.replaceOne({ _id: id }, document, { upsert: true });
  }

  find(id: string) {
    return this.#findOne({ _id: id });
  }

  findByUid(uid: string) {
    return this.#findOne({ uid });
  }

  findByUserCode(userCode: string) {
    return this.#findOne({ userCode });
  }

  async consume(id: string): Promise<void> {
    await this.#collection.updateOne({ _id: id }, { $set: { consumed: Math.floor(this.#clock.now().getTime() / 1000) } });
  }

  async destroy(id: string): Promise<void> {
    await this.#collection.deleteOne({ _id: id });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.#collection.deleteMany({ grantId });
  }

  async #findOne(filter: Partial<Pick<StoredModel, '_id' | 'uid' | 'userCode'>>): Promise<AdapterPayload | undefined> {
    if (Object.values(filter).some((value) => typeof value !== 'string')) return undefined;
    const stored = await this.#collection.findOne({ ...filter, ...live(this.#clock.now()) });
    if (!stored) return undefined;
    const payload = JSON.parse(stored.payload) as AdapterPayload;
    return stored.consumed === undefined ? payload : { ...payload, consumed: stored.consumed };
  }
}

/** Clients are our applications: read-only to the provider, managed through `/api/applications`. */
class ClientAdapter implements Adapter {
  readonly #findClient: ClientFinder;

  constructor(findClient: ClientFinder) {
    this.#findClient = findClient;
  }

  find(id: string) {
    return this.#findClient(id);
  }

  async upsert(): Promise<void> {
    throw new TypeError('clients are managed through the Management API, not by the provider');
  }

  async destroy(): Promise<void> {
    throw new TypeError('clients are managed through the Management API, not by the provider');
  }

  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume() {}
  async revokeByGrantId() {}
}

/**
 * oidc-provider's `adapter` setting: a factory called once per model name. `clock` says what has
 * expired; the system's, as oidc-provider's own checks read it (a test passes one it moves).
 */
export function createAdapterFactory(db: Db, findClient: ClientFinder, clock: Clock = systemClock) {
  const adapters = new Map<string, Adapter>();
  return function adapterFor(model: string): Adapter {
    let adapter = adapters.get(model);
    if (!adapter) {
      adapter = model === 'Client' ? new ClientAdapter(findClient) : new MongoModelAdapter(db, model, clock);
      adapters.set(model, adapter);
    }
    return adapter;
  };
}

type HostAdapter = AdapterConstructor | AdapterFactory;

/** oidc-provider takes an adapter class or a factory function; so do we, for the host's. */
function instantiate(adapter: HostAdapter, name: string): Adapter {
  try {
    return new (adapter as AdapterConstructor)(name);
  } catch (error) {
    if (error instanceof TypeError && /not a constructor/.test(error.message)) return (adapter as AdapterFactory)(name);
    throw error;
  }
}

/**
 * Our adapter composed with a host's: the host's storage keeps its models, clients come from
 * our applications first and then from the host's storage. Without a host adapter, ours stores everything.
 */
export function composeAdapters(db: Db, findClient: ClientFinder, host?: HostAdapter): AdapterFactory {
  const factory = composeStorage(db, findClient, host);
  const refreshTokens = forgetNonce(factory('RefreshToken'));
  return (name: string) => (name === 'RefreshToken' ? refreshTokens : factory(name));
}

/**
 * OIDC Core §12.2: an ID token issued on refresh SHOULD NOT carry a `nonce`. oidc-provider copies
 * the authorization request's nonce into the refresh token and from there into every refreshed ID
 * token; a refresh token stored without it gives ID tokens without it. Nothing else reads it.
 */
function forgetNonce(adapter: Adapter): Adapter {
  return {
    upsert: (id, { nonce: _nonce, ...payload }, expiresIn) => adapter.upsert(id, payload, expiresIn),
    find: (id) => adapter.find(id),
    findByUid: (uid) => adapter.findByUid(uid),
    findByUserCode: (userCode) => adapter.findByUserCode(userCode),
    consume: (id) => adapter.consume(id),
    destroy: (id) => adapter.destroy(id),
    revokeByGrantId: (grantId) => adapter.revokeByGrantId(grantId),
  };
}

function composeStorage(db: Db, findClient: ClientFinder, host?: HostAdapter): AdapterFactory {
  if (!host) return createAdapterFactory(db, findClient);
  const hostAdapters = new Map<string, Adapter>();
  const hostAdapterFor = (name: string) => {
    let adapter = hostAdapters.get(name);
    if (!adapter) hostAdapters.set(name, (adapter = instantiate(host, name)));
    return adapter;
  };
  const ours = createAdapterFactory(db, async (id) => (await findClient(id)) ?? ((await hostAdapterFor('Client').find(id)) || undefined));
  return (name: string) => (name === 'Client' ? ours(name) : hostAdapterFor(name));
}
