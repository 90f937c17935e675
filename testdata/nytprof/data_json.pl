# Prints Devel::NYTProf::Data's view of a profile as JSON (core JSON::PP), for
# crates/nytprof/tests/interop.rs. Usage: data_json.pl FILE [collapse]; without `collapse`
# evals are not collapsed (skip_collapse_evals => 1), with it Data.pm's default applies.
use strict;
use warnings;
use Devel::NYTProf::Data;
use JSON::PP;

my $file = shift or die "usage: $0 nytprof.out [collapse]\n";
my $collapse = (shift // '') eq 'collapse';
my $p = Devel::NYTProf::Data->new({ filename => $file, quiet => 1, skip_collapse_evals => !$collapse });

my %out = (attribute => $p->{attribute}, option => $p->{option});
for my $fi ($p->all_fileinfos) {
    $out{files}{ $fi->fid } = [
        $fi->filename, $fi->eval_fid, $fi->eval_line, $fi->flags, $fi->size, $fi->mtime,
        [ sort map { $_->subname } $fi->subs_defined ],
        [ @{ $fi->meta->{merged_fids} || [] } ],
    ];
    # The calling file's view of its calls (NYTP_FIDi_SUBS_CALLED).
    my $scl = $fi->sub_call_lines || {};
    for my $line (keys %$scl) {
        for my $name (keys %{ $scl->{$line} }) {
            my $sc = $scl->{$line}{$name};
            $out{file_calls}{ $fi->fid }{$line}{$name} =
                [ @$sc[0, 1, 2, 5, 6], [ sort keys %{ $sc->[7] || {} } ] ];
        }
    }
}
for my $level (qw(line block sub)) {
    my $data = $p->{"fid_${level}_time"} or next;
    for my $fid (0 .. $#$data) {
        my $lines = $data->[$fid] or next;
        for my $line (0 .. $#$lines) {
            my $l = $lines->[$line] or next;
            $out{"${level}_times"}{$fid}{$line} = [ $l->[0], $l->[1] ];
        }
    }
}
for my $name (keys %{ $p->{sub_subinfo} }) {
    my $si = $p->{sub_subinfo}{$name};
    my %callers;
    my $cb = $si->[10] || {};    # NYTP_SIi_CALLED_BY
    for my $fid (keys %$cb) {
        $callers{$fid} = {};
        for my $line (keys %{ $cb->{$fid} }) {
            my $sc = $cb->{$fid}{$line};
            $callers{$fid}{$line} = [ @$sc[0, 1, 2, 5, 6], [ sort keys %{ $sc->[7] || {} } ] ];
        }
    }
    $out{subs}{$name} = [ @$si[0 .. 5, 8, 9], \%callers, [ sort @{ $si->meta->{merged_sub_names} || [] } ] ];
}
print JSON::PP->new->canonical->utf8->allow_nonref->encode(\%out), "\n";
