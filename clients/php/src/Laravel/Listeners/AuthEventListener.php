<?php

declare(strict_types=1);

namespace Vigil\Laravel\Listeners;

use Illuminate\Auth\Events\Failed;
use Illuminate\Auth\Events\Login;
use Illuminate\Auth\Events\Logout;
use Illuminate\Auth\Events\PasswordReset;
use Illuminate\Contracts\Auth\Authenticatable;
use Vigil\Vigil;

/**
 * Turns Laravel's authentication events into Vigil events. Credentials are never sent:
 * only the login identifier (email or username) of a failed attempt, so brute-force and
 * credential-spray detection can count it.
 */
final class AuthEventListener
{
    /** Credential keys that identify who tried to log in; everything else (the password) stays here. */
    private const IDENTIFIERS = ['email', 'username', 'login'];

    /** Laravel event => method of this class, registered by the service provider. */
    public const LISTENERS = [
        Login::class => 'onLogin',
        Failed::class => 'onFailed',
        Logout::class => 'onLogout',
        PasswordReset::class => 'onPasswordReset',
    ];

    public function __construct(private readonly Vigil $vigil)
    {
    }

    public function onLogin(Login $event): void
    {
        $this->track('auth.login.success', $event->user, ['guard' => $event->guard, 'remember' => $event->remember]);
    }

    public function onFailed(Failed $event): void
    {
        $fields = [];
        foreach (self::IDENTIFIERS as $key) {
            if (is_string($event->credentials[$key] ?? null)) {
                $fields[$key === 'email' ? 'email' : 'actor_id'] ??= $event->credentials[$key];
            }
        }
        $this->track('auth.login.failure', $event->user, ['guard' => $event->guard], $fields);
    }

    public function onLogout(Logout $event): void
    {
        $this->track('auth.logout', $event->user, ['guard' => $event->guard]);
    }

    public function onPasswordReset(PasswordReset $event): void
    {
        $this->track('auth.password.reset_completed', $event->user, []);
    }

    /**
     * @param array<string, mixed> $metadata
     * @param array<string, string> $fields from the attempt, used when no user is known
     */
    private function track(string $type, ?Authenticatable $user, array $metadata, array $fields = []): void
    {
        if ($user !== null) {
            $fields['actor_id'] = (string) $user->getAuthIdentifier();
            $email = $user->email ?? null;
            if (is_string($email) && $email !== '') {
                $fields['email'] = $email;
            }
        }
        $metadata = array_filter($metadata, static fn ($value): bool => $value !== null);
        $this->vigil->track(['event' => $type] + $fields + ['metadata' => $metadata]);
    }
}
