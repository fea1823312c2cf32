/** Every page the sign-in pages draw, by flow; the frame, the stylesheet and the markup below them. */
export { type ApplicationLook, type Branding, type FormContext, type PageContext, type PageError, passkeyScriptPath, webAuthnLibraryPath } from './frame.js';
export { stylesheet, stylesheetPath, colorsOfQuery, type BrandColors } from './stylesheet.js';
export * from './fields.js';
export * from './sign-in.js';
export * from './sign-up.js';
export * from './codes.js';
export * from './mfa.js';
export * from './consent.js';
