// Use cases of this domain; each file exports one, plus the queue's and the URL policy's parts.

export * from './create-webhook';
export * from './delete-webhook';
export * from './deliveries';
export * from './list-webhooks';
export * from './notify';
export * from './queue';
export * from './url-policy';
export * from './views';
