/**
 * The pages' one script of our own, served from our origin (the CSP allows `script-src 'self'`
 * and nothing inline): it runs a passkey ceremony through the Experience API with
 * @simplewebauthn/browser, then sends the browser to `<base>/continue`, where the server decides
 * what comes next. Buttons say what they do with `data-passkey`: `register` (enrol a passkey as a
 * second factor), `authenticate` (prove one), `sign-in` (a passkey as the first factor).
 */
export const passkeyScript = `'use strict';
(function () {
  var api = function (method, path, body) {
    return fetch('/api/experience' + path, {
      method: method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body || {}),
    }).then(function (response) {
      if (response.status === 204) return {};
      return response.json().then(function (json) {
        if (!response.ok) throw new Error(json.message || 'The request failed.');
        return json;
      });
    });
  };
  var webauthn = window.SimpleWebAuthnBrowser;
  function run(button) {
    var base = button.getAttribute('data-base');
    var mode = button.getAttribute('data-passkey');
    var status = document.getElementById('passkey-status');
    var steps;
    if (mode === 'register') {
      steps = api('POST', '/verification/web-authn/registration').then(function (made) {
        return webauthn.startRegistration({ optionsJSON: made.registrationOptions }).then(function (payload) {
          return api('POST', '/verification/web-authn/registration/verify', { verificationId: made.verificationId, payload: payload }).then(function () {
            return api('POST', '/profile/mfa', { type: 'WebAuthn', verificationId: made.verificationId });
          });
        });
      });
    } else {
      var start = mode === 'sign-in' ? api('PUT', '', { interactionEvent: 'SignIn' }) : Promise.resolve();
      steps = start.then(function () {
        return api('POST', '/verification/web-authn/authentication');
      }).then(function (made) {
        return webauthn.startAuthentication({ optionsJSON: made.authenticationOptions }).then(function (payload) {
          return api('POST', '/verification/web-authn/authentication/verify', { verificationId: made.verificationId, payload: payload });
        }).then(function () {
          return mode === 'sign-in' ? api('POST', '/identification', { verificationId: made.verificationId }) : undefined;
        });
      });
    }
    button.disabled = true;
    steps.then(function () {
      window.location.assign(base + '/continue');
    }, function (error) {
      button.disabled = false;
      // Said in the page's language: the button carries the messages (data-not-used, data-failed).
      status.textContent = button.getAttribute(error && error.name === 'NotAllowedError' ? 'data-not-used' : 'data-failed');
      status.hidden = false;
    });
  }
  document.querySelectorAll('[data-passkey]').forEach(function (button) {
    button.addEventListener('click', function () { run(button); });
  });
})();
`;
