/**
 * Errors of the Management API. Every error a handler throws carries its HTTP
 * status and a stable `code`, so the error middleware only has to serialize it.
 * At the token endpoint we throw oidc-provider's own `errors.*` instead.
 */
export const apiErrorStatus = {
  'auth.authorization_header_missing': 401,
  'auth.invalid_token': 401,
  'auth.forbidden': 403,
  'guard.invalid_input': 400,
  'guard.invalid_pagination': 400,
  'guard.unsupported_media_type': 415,
  'guard.payload_too_large': 413,
  'entity.not_exists_with_id': 404,
  'entity.not_found': 404,
  'entity.unique_integrity_violation': 422,
  'entity.invalid_input': 422,
  'entity.relation_foreign_key_not_found': 422,
  'entity.db_constraint_violated': 422,
  'route.not_found': 404,
  'route.method_not_allowed': 405,
  'route.method_not_implemented': 501,
  'application.secret_name_exists': 422,
  'application.not_a_confidential_client': 400,
  'application.built_in': 422,
  'application.invalid_type': 422,
  'application.invalid_role_type': 422,
  'resource.resource_identifier_in_use': 422,
  'resource.cannot_modify_management_api': 400,
  'scope.name_exists': 422,
  'user.username_already_in_use': 422,
  'user.email_already_in_use': 422,
  'session.email_blocklist.email_not_allowed': 422,
  'session.email_blocklist.email_subaddressing_not_allowed': 422,
  'user.phone_already_in_use': 422,
  'user.invalid_phone': 422,
  'user.suspended': 422,
  'user.invalid_role_type': 422,
  'user.password_and_digest': 400,
  'user.sign_in_method_not_enabled': 422,
  'user.sign_up_method_not_enabled': 422,
  'sign_in_experiences.duplicated_sign_in_method': 400,
  'sign_in_experiences.empty_sign_in_methods': 400,
  'sign_in_experiences.empty_sign_up_identifiers': 400,
  'sign_in_experiences.at_least_one_authn_factor': 400,
  'sign_in_experiences.username_requires_password': 400,
  'sign_in_experiences.passwordless_requires_verify': 400,
  'sign_in_experiences.miss_sign_up_identifier_in_sign_in': 400,
  'sign_in_experiences.password_sign_in_must_be_enabled': 400,
  'sign_in_experiences.code_sign_in_must_be_enabled': 400,
  'sign_in_experiences.duplicated_sign_up_identifiers': 400,
  'sign_in_experiences.backup_code_cannot_be_enabled_alone': 400,
  'sign_in_experiences.empty_mfa_factors': 400,
  'sign_in_experiences.passkey_sign_in_requires_web_authn': 400,
  'session.mfa.require_mfa_verification': 403,
  'session.mfa.invalid_totp_code': 400,
  'session.mfa.invalid_backup_code': 400,
  'session.mfa.mfa_factor_not_enabled': 400,
  'session.mfa.backup_code_can_not_be_alone': 422,
  'session.mfa.pending_info_not_found': 400,
  'session.mfa.webauthn_verification_failed': 400,
  'session.verification_session_not_found': 404,
  'user.missing_mfa': 422,
  'user.totp_already_in_use': 422,
  'user.personal_access_token_name_exists': 422,
  'user.totp_secret_invalid': 422,
  'user.backup_code_already_in_use': 422,
  'user.identity_already_in_use': 422,
  'user.identity_not_exist': 404,
  'connector.not_found': 404,
  'connector.invalid_config': 400,
  'connector.multiple_target_with_same_platform': 422,
  'connector.general': 400,
  'user.last_sign_in_method_required': 422,
  'session.invalid_connector_id': 422,
  'single_sign_on.forbidden_domains': 422,
  'single_sign_on.duplicated_domains': 422,
  'single_sign_on.duplicate_connector_name': 409,
  'session.mfa.backup_code_required': 422,
  'session.mfa.mfa_policy_not_user_controlled': 422,
  'session.not_supported_for_forgot_password': 400,
  'user.same_password': 422,
  'user.password_algorithm_required': 400,
  'role.name_in_use': 422,
  'role.type_mismatch': 422,
  'role.built_in': 422,
  'role.user_exists': 422,
  'role.application_exists': 422,
  'role.scope_exists': 422,
  'role.management_api_scopes_not_assignable_to_user_role': 400,
  'organization.require_membership': 422,
  'organization.role_names_not_found': 422,
  'application.third_party_application_only': 422,
  'one_time_token.active_token_not_found': 404,
  'one_time_token.token_expired': 400,
  'user.user_not_exist': 404,
  'jwt_customizer.general': 422,
  'oidc.key_required': 422,
  'oidc.key_not_found': 404,
  'oidc.only_previous_key_can_be_deleted': 422,
  'oidc.invalid_request': 422,
  'oidc.keys_managed_by_host': 422,
  'hook.url_not_allowed': 422,
  'hook.missing_events': 400,
  'hook.send_test_payload_failed': 422,
  'hook.endpoint_responded_with_error': 422,
  'hook.disabled': 422,
  'hook.replay_too_large': 422,
  'hook.delivery_in_progress': 409,
  'hook.feed_cursor_expired': 410,
  'hook.v1a_not_enabled': 422,
  'service.worker_unavailable': 503,
  'service.host_accounts_unavailable': 503,
  'impersonation.reason_required': 400,
  'impersonation.ticket_required': 400,
  'impersonation.user_protected': 403,
  'impersonation.actor_is_subject': 400,
  'impersonation.already_revoked': 409,
  'impersonation.unknown_resource': 422,
  'request.conflict': 409,
  'request.invalid_input': 400,
  'request.too_many_requests': 429,
  'session.not_found': 401,
  'session.csrf_failed': 403,
  'session.invalid_event': 400,
  'session.invalid_credentials': 422,
  'session.too_many_attempts': 429,
  'session.verification_blocked_too_many_attempts': 400,
  'verification_record.permission_denied': 401,
  'session.identifier_not_found': 404,
  'user.missing_profile': 422,
  'user.new_password_required_in_profile': 422,
  'user.username_exists_in_profile': 422,
  'user.email_exists_in_profile': 422,
  'user.phone_exists_in_profile': 422,
  'user.password_exists_in_profile': 422,
  'user.email_required': 422,
  'user.phone_required': 422,
  'user.email_or_phone_required': 422,
  'verification_record.not_found': 400,
  'session.already_submitted': 409,
  'session.identity_conflict': 409,
  'verification_code.code_mismatch': 400,
  'verification_code.email_mismatch': 400,
  'verification_code.phone_mismatch': 400,
  'verification_code.expired': 400,
  'verification_code.exceed_max_try': 400,
  'verification_code.not_found': 400,
  'session.verification_failed': 400,
  'request.message_rate_limited': 429,
  'password.rejected': 422,
  'oidc.session_not_found': 404,
  'oidc.invalid_session_account_id': 404,
  'oidc.invalid_grant': 404,
  'oidc.sessions_stored_elsewhere': 501,
  'database.unavailable': 503,
  internal_error: 500,
} as const;

export type ApiErrorCode = keyof typeof apiErrorStatus;

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  /** Whether `message` may be shown to the caller. Server faults keep theirs private; an unavailable database is no secret. */
  readonly expose: boolean;
  readonly data: Record<string, unknown> | undefined;

  /** `status` overrides the code's own, where Logto answers one code with two statuses (`request.invalid_input`). */
  constructor(code: ApiErrorCode, message: string, data?: Record<string, unknown>, status?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status ?? apiErrorStatus[code];
    this.expose = this.status < 500 || this.status === 503;
    this.data = data;
  }
}

export function assertThat(condition: unknown, error: ApiError | (() => ApiError)): asserts condition {
  if (!condition) {
    throw typeof error === 'function' ? error() : error;
  }
}

/** Logto's `entity.not_exists_with_id`, its data naming the entity (`name`, as Logto's; `entity`, as ours was) and the id. */
export const notFound = (entity: string, id: string) =>
  new ApiError('entity.not_exists_with_id', `${entity} with id \`${id}\` does not exist`, { name: entity, entity, id });

/**
 * Logto's generic relation routes insert links whose foreign keys then fail: an unknown id there is
 * 422 `entity.relation_foreign_key_not_found`, not 404. Rethrows a not-found error as that; any other as it is.
 */
export function asBrokenForeignKey(error: unknown): never {
  if (error instanceof ApiError && error.code === 'entity.not_exists_with_id') {
    throw new ApiError('entity.relation_foreign_key_not_found', `${error.message}: nothing can be linked to it`, error.data);
  }
  throw error;
}

/**
 * Logto's generic routes delete by a condition and answer a delete that removed nothing as 404
 * `entity.not_found` (its DeletionError), whichever id was unknown. Rethrows a not-found error as that.
 */
export function asNothingDeleted(error: unknown): never {
  if (error instanceof ApiError && error.code === 'entity.not_exists_with_id') {
    throw new ApiError('entity.not_found', error.message, error.data);
  }
  throw error;
}

/**
 * The index a duplicate-key error names. Our unique indexes are named after their fields, and
 * not every server fills `keyPattern`, so the message is read too.
 */
export function duplicateKeyIndex(error: { keyPattern?: Record<string, unknown>; message?: string }): string | undefined {
  const fromPattern = error.keyPattern && Object.keys(error.keyPattern).join('_');
  return fromPattern || /index: (\S+) dup key/.exec(error.message ?? '')?.[1];
}

/** MongoDB's duplicate-key error, raised by a unique index. */
export function isDuplicateKeyError(error: unknown): error is { code: 11000; keyPattern?: Record<string, unknown>; message?: string } {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
