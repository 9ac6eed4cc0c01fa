package providers

// Forbidden exposes forbidden to the external test that compares it with
// admin.ForbiddenAddr.
var Forbidden = forbidden
