// The React error boundary: a render error shows a message (never a blank
// page) and is reported to /admin/v1/client-errors.

import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
  onError: (err: unknown, info: ErrorInfo) => void;
  /** resetKey: a new value (a navigation) clears the error. */
  resetKey?: string;
}

export class ErrorBoundary extends Component<Props, { error: Error | null; key?: string }> {
  state: { error: Error | null; key?: string } = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  static getDerivedStateFromProps(props: Props, state: { error: Error | null; key?: string }) {
    if (props.resetKey !== state.key) return { error: null, key: props.resetKey };
    return null;
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    this.props.onError(error, info);
  }

  render() {
    if (this.state.error) {
      return (
        <section className="panel error-panel" role="alert">
          <h2>This page ran into a problem</h2>
          <p>
            The dashboard hit an error it did not expect ({this.state.error.message}). It has been reported. Try another
            page, or reload.
          </p>
          <button type="button" onClick={() => location.reload()}>
            Reload
          </button>
        </section>
      );
    }
    return this.props.children;
  }
}
