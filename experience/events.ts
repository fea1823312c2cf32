/** The three kinds of interaction, named as Logto's Experience API names them. */
export const interactionKinds = ['SignIn', 'Register', 'ForgotPassword'] as const;
export type InteractionEvent = (typeof interactionKinds)[number];

/** The webhook event each kind announces when it ends with a sign-in. */
export const announcedEvent = {
  SignIn: 'PostSignIn',
  Register: 'PostRegister',
  ForgotPassword: 'PostResetPassword',
} as const satisfies Record<InteractionEvent, string>;
